"""A local stand-in for GitHub's MCP server (github/github-mcp-server), for the offline demo.

Run by OryxOS from offline/mcp_servers.yaml as ``python offline/github_mcp_stub.py`` (stdio).
It offers two tools with the official server's names and argument names —
``list_pull_requests`` and ``pull_request_read`` — and answers from a fixed list of pull
requests of ``acme/shop`` in the REST API's shapes (number, title, state, user.login, draft,
merged_at, updated_at, html_url). It needs the ``mcp`` package (installed with OryxOS).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from mcp.server.mcpserver import MCPServer

server = MCPServer("github-stub")


def _pulls() -> list[dict]:
    now = datetime.now(UTC).replace(microsecond=0)

    def ago(hours: float) -> str:
        return (now - timedelta(hours=hours)).isoformat().replace("+00:00", "Z")

    def pr(number, title, author, state, hours, merged=False, draft=False) -> dict:
        return {
            "number": number,
            "title": title,
            "state": state,
            "draft": draft,
            "user": {"login": author},
            "created_at": ago(hours + 30),
            "updated_at": ago(hours),
            "merged_at": ago(hours) if merged else None,
            "html_url": f"https://github.com/acme/shop/pull/{number}",
        }

    return [
        pr(142, "Add Alipay checkout", "lina", "closed", 2, merged=True),
        pr(141, "Fix cart total rounding for JPY", "kenji", "closed", 5, merged=True),
        pr(140, "Order history page", "sam", "open", 8),
        pr(139, "Try a new search index", "ops-bot", "closed", 20),
        pr(138, "Dark mode", "mira", "open", 23, draft=True),
        pr(131, "Old refactor", "sam", "closed", 200, merged=True),
    ]


@server.tool()
def list_pull_requests(
    owner: str,
    repo: str,
    state: str = "open",
    sort: str = "created",
    direction: str = "desc",
    perPage: int = 30,
    page: int = 1,
) -> str:
    """List pull requests in a GitHub repository."""
    if (owner, repo) != ("acme", "shop"):
        raise ValueError(f"repository {owner}/{repo} not found (this stub knows acme/shop)")
    pulls = [p for p in _pulls() if state == "all" or p["state"] == state]
    key = "updated_at" if sort in ("updated", "long-running") else "created_at"
    pulls.sort(key=lambda p: p[key], reverse=direction == "desc")
    start = (page - 1) * perPage
    return json.dumps(pulls[start : start + perPage], indent=1)


@server.tool()
def pull_request_read(method: str, owner: str, repo: str, pullNumber: int) -> str:
    """Get information on a specific pull request (method: get)."""
    for pull in _pulls():
        if (owner, repo) == ("acme", "shop") and pull["number"] == pullNumber:
            return json.dumps(pull, indent=1)
    raise ValueError(f"pull request {owner}/{repo}#{pullNumber} not found")


if __name__ == "__main__":
    server.run()
