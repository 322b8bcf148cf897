"""examples/pr-digest/README.md, offline: MCP stub server, webhook receiver, scripted model."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from tests.e2e.conftest import free_port

pytestmark = pytest.mark.timeout(180)


def test_pr_digest_offline_walkthrough(example) -> None:
    ex = example("pr-digest")
    model_port, hook_port = free_port(), free_port()
    ex.env["ORYXOS_MODEL_PORT"] = str(model_port)
    # 1. the stand-ins
    ex.start_model("offline/script.yaml", model_port)
    ex.start(
        sys.executable,
        "offline/webhook_receiver.py",
        "--port",
        str(hook_port),
        port=hook_port,
        name="receiver",
    )
    ex.env["ORYXOS_PROVIDER"] = "offline"
    # 2. the local GitHub MCP server ("cp offline/mcp_servers.yaml .oryxos/mcp_servers.yaml")
    shutil.copy(ex.dir / "offline/mcp_servers.yaml", ex.dir / ".oryxos/mcp_servers.yaml")
    listed = ex.oryxos("mcp", "list")
    assert listed.returncode == 0, listed.stderr
    assert "github" in listed.stdout and "running" in listed.stdout
    tools = ex.oryxos("mcp", "tools", "github")
    assert "list_pull_requests" in tools.stdout and "pull_request_read" in tools.stdout
    # 3. the channel
    url = f"http://127.0.0.1:{hook_port}/hook"
    added = ex.oryxos(
        "notify",
        "add",
        "team",
        "--type",
        "webhook",
        "--url",
        url,
        "--description",
        "local receiver",
    )
    assert added.returncode == 0, added.stderr
    # 4. the digest
    question = "Send the PR digest of acme/shop for the last 24 hours to team"
    turn = ex.oryxos("chat", "-p", "pr-digest", "-m", question)
    assert turn.returncode == 0, turn.stdout + turn.stderr
    assert "Sent the digest of 5 pull requests to team." in turn.stdout
    received = [json.loads(x) for x in (ex.dir / "received.jsonl").read_text().splitlines()]
    assert len(received) == 1 and received[0]["channel"] == "team"
    assert "#142 Add Alipay checkout (@lina)" in received[0]["content"]
    assert "--- team at" in ex.output("receiver")
    # 5. the audit: the MCP call (with its result from the stub) and the delivery
    shown = ex.oryxos("audit", "tools")
    assert shown.returncode == 0, shown.stderr
    assert "list_pull_requests" in shown.stdout and "notify" in shown.stdout
    rows = ex.query(
        "SELECT tool_name, success, input_json, result_json FROM tool_invocations ORDER BY id"
    )
    assert [(r[0], r[1]) for r in rows] == [("list_pull_requests", 1), ("notify", 1)]
    assert json.loads(rows[0][2])["owner"] == "acme"
    assert "Try a new search index" in rows[0][3]  # the stub's answer went through MCP
    assert json.loads(rows[1][2])["channel"] == "team"
    assert "delivered to team" in rows[1][3]
    # 6. clean up
    assert ex.oryxos("notify", "remove", "team").returncode == 0
