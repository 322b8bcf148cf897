"""End to end: an agent whose AGENT.md says to send the report to team-lark delivers it, through
the real loop, prompt builder, executor (audit) and the scripted model server; the receiver on
127.0.0.1 plays Feishu."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

from oryxos.runtime import Runtime
from oryxos.storage import AuditQuery
from oryxos.testing import Reply, use_model_server

SECRET = "lark-e2e-secret-31337"
REPORT = "## Daily report\n- 3 deploys\n- **0** incidents"
AGENT_MD = """\
---
name: reporter
description: Writes the daily report and shares it.
provider:
  name: default
tools:
  - notify
---

Write the daily report from what the user tells you.
Then send the report to team-lark with notify, and answer with one sentence saying where it went.
"""


def test_an_agent_sends_the_report_to_team_lark(
    oryxos_workspace, oryxos_model_server, oryxos_make_pm, receiver, monkeypatch
):
    monkeypatch.setenv("TEAM_LARK_SECRET", SECRET)
    use_model_server(oryxos_workspace, oryxos_model_server)
    agent_dir = oryxos_workspace.agents_dir / "reporter"
    agent_dir.mkdir(parents=True)
    (agent_dir / "AGENT.md").write_text(AGENT_MD, encoding="utf-8")
    receiver.default = (200, {"code": 0, "data": {}, "msg": "success"}, 0)
    oryxos_model_server.script(
        Reply.tool("notify", {"channel": "team-lark", "content": REPORT}),
        Reply.answer("The report is in the team-lark group."),
    )

    with Runtime.load(oryxos_workspace, oryxos_make_pm()) as runtime:
        runtime.notify.add(
            "team-lark",
            "feishu",
            receiver.url("/open-apis/bot/v2/hook/team"),
            secret="${TEAM_LARK_SECRET}",
        )
        profile = runtime.agents.load("reporter")
        result = runtime.loop.run_turn(profile, "Today: 3 deploys and no incidents.")
        rows = runtime.storage.audit.tool_invocations(AuditQuery(tool_name="notify")).items

    assert result.success, result.error
    assert result.answer == "The report is in the team-lark group."
    # The model saw the instruction and the tool, with the registered channel named in it.
    first = oryxos_model_server.requests[0]
    assert "send the report to team-lark with notify" in first["messages"][0]["content"]
    [tool] = first["tools"]
    assert tool["function"]["name"] == "notify"
    assert "Registered channels: team-lark." in tool["function"]["description"]
    # Feishu received exactly the documented, signed card.
    [request] = receiver.requests
    assert request.path == "/open-apis/bot/v2/hook/team"
    body = request.json
    key = f"{body['timestamp']}\n{SECRET}".encode()
    assert body == {
        "timestamp": body["timestamp"],
        "sign": base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode(),
        "msg_type": "interactive",
        "card": {"elements": [{"tag": "markdown", "content": REPORT}]},
    }
    # The tool result went back to the model, and the call is audited without the secret.
    tool_message = oryxos_model_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert (
        tool_message["content"]
        == "delivered to team-lark: Feishu accepted the card (Markdown) message"
    )
    [row] = rows
    assert row.success and row.agent == "reporter"
    assert row.input == {"channel": "team-lark", "content": REPORT}
    assert SECRET not in json.dumps(row.as_dict(), default=str)
