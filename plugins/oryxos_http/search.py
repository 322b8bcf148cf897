"""web_search: SearXNG (self-hosted) or the Brave Search API, chosen by ``web_search.backend``.

Sandbox rule: the back-end's host must be in ``sandbox.http.allowed_domains`` (and pass the
address check) like any other request; result URLs outside the whitelist are listed but
marked, since fetching them would be refused. Without a configured back-end the tool is not
offered at all (the ``web_search_configured`` availability predicate).

Formats used (both JSON):
- SearXNG ``GET <url>/search?q=...&format=json`` → ``{"results": [{"title", "url",
  "content"}, ...]}`` (the instance must have ``json`` in ``search.formats``).
- Brave ``GET https://api.search.brave.com/res/v1/web/search?q=...&count=N`` with header
  ``X-Subscription-Token`` → ``{"web": {"results": [{"title", "url", "description"}, ...]}}``.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from oryxos.errors import OryxError
from oryxos.tools import Tool, ToolResult
from oryxos_http.client import HttpToolError, fetch

BRAVE_ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
PREDICATE = "web_search_configured"
_TAG_RE = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str


def _config(ctx: Any) -> Any:
    config = getattr(ctx, "config", None)
    if config is None and getattr(ctx, "runtime", None) is not None:
        config = ctx.runtime.config
    return config


def is_configured(ctx: Any) -> bool:
    """The availability predicate: a back-end is chosen and has what it needs."""
    config = _config(ctx)
    if config is None:
        return False
    ws = config.web_search
    if ws.backend == "searxng":
        return bool(ws.url)
    if ws.backend == "brave":
        return ws.api_key is not None and ws.api_key.is_set()
    return False


def _clean(text: Any) -> str:
    """Snippets come with <strong> highlighting and entities: plain text for the model."""
    return " ".join(html.unescape(_TAG_RE.sub("", str(text or ""))).split())


def search_searxng(runtime: Any, query: str, count: int) -> list[SearchResult]:
    ws = runtime.config.web_search
    url = f"{ws.url.rstrip('/')}/search?{urlencode({'q': query, 'format': 'json'})}"
    data = _get_json(runtime, url, {"accept": "application/json"}, "SearXNG")
    items = data.get("results") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise HttpToolError("SearXNG answered JSON without a 'results' list")
    return [
        SearchResult(_clean(i.get("title")), str(i.get("url", "")), _clean(i.get("content")))
        for i in items[:count]
        if isinstance(i, dict) and i.get("url")
    ]


def search_brave(runtime: Any, query: str, count: int) -> list[SearchResult]:
    ws = runtime.config.web_search
    endpoint = ws.url or BRAVE_ENDPOINT
    url = f"{endpoint}?{urlencode({'q': query, 'count': count})}"
    headers = {"accept": "application/json", "x-subscription-token": ws.api_key.resolve()}
    data = _get_json(runtime, url, headers, "Brave Search")
    web = data.get("web") if isinstance(data, dict) else None
    items = web.get("results", []) if isinstance(web, dict) else []
    return [
        SearchResult(_clean(i.get("title")), str(i.get("url", "")), _clean(i.get("description")))
        for i in items[:count]
        if isinstance(i, dict) and i.get("url")
    ]


def _get_json(runtime: Any, url: str, headers: dict[str, str], name: str) -> Any:
    fetched = fetch(runtime, "GET", url, headers=headers)
    if not fetched.ok:
        raise HttpToolError(
            f"{name} answered HTTP {fetched.status} {fetched.reason}: {fetched.text()[:300]}",
            retryable=fetched.status == 429 or fetched.status >= 500,
        )
    try:
        return json.loads(fetched.text())
    except json.JSONDecodeError as err:
        raise HttpToolError(f"{name} did not answer JSON ({err.msg}); is its URL right?") from None


BACKENDS = {"searxng": search_searxng, "brave": search_brave}


class WebSearchTool(Tool):
    """Search the web through the configured back-end."""

    name = "web_search"
    description = "Search the web; returns results as title, URL and snippet."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to search for"},
            "count": {"type": "integer", "minimum": 1, "maximum": 20, "description": "results"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        runtime = getattr(ctx, "runtime", None)
        query = str(input["query"]).strip()
        if not query:
            return ToolResult.fail("query: may not be empty", retryable=True)
        if runtime is None or not is_configured(ctx):
            return ToolResult.fail("web_search has no back-end (web_search in config.yaml)")
        ws = runtime.config.web_search
        count = max(1, min(int(input.get("count") or ws.max_results), 20))
        try:
            results = BACKENDS[ws.backend](runtime, query, count)
        except OryxError as err:
            return ToolResult.fail(str(err), retryable=getattr(err, "retryable", False))
        if not results:
            return ToolResult.ok(f"No results for {query!r}.")
        return ToolResult.ok(render(runtime, results))


def render(runtime: Any, results: list[SearchResult]) -> str:
    lines = []
    for n, result in enumerate(results, 1):
        lines += [f"{n}. {result.title or '(no title)'}", f"   {result.url}"]
        if result.snippet:
            lines.append(f"   {result.snippet}")
        try:
            runtime.sandbox.check_url(result.url)
        except OryxError:
            lines.append("   (not in the HTTP whitelist: fetching it will be refused)")
    return "\n".join(lines)
