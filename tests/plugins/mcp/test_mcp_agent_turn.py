"""An agent turn end to end: scripted model server → ReAct loop → executor → MCP server → audit."""

from __future__ import annotations

import json

import pytest
from mcp_helpers import py_server

from oryxos.storage import AuditQuery

pytestmark = pytest.mark.slow


def test_an_agent_turn_calls_an_mcp_tool_and_every_call_is_audited(
    oryxos_workspace, oryxos_model_server, oryxos_make_pm, write_servers, fast_timeouts
):
    from oryxos.loop import ReActLoop
    from oryxos.runtime import Runtime
    from oryxos.testing import Reply, use_model_server

    fast_timeouts()
    write_servers(f"servers:\n  - name: time\n    command: {py_server('mcp-server-time')}\n")
    use_model_server(oryxos_workspace, oryxos_model_server, max_retries=0)
    agent_dir = oryxos_workspace.agents_dir / "clock"
    agent_dir.mkdir()
    (agent_dir / "AGENT.md").write_text(
        "---\nname: clock\ndescription: tells the time\nprovider: {name: default}\n"
        "mcp_servers: [time]\n---\nAnswer with the current time.\n"
    )
    oryxos_model_server.script(
        Reply.tool("get_current_time", {"timezone": "Asia/Tokyo"}),
        Reply.tool("get_current_time", {"timezone": "Mars/Olympus_Mons"}),  # a tool error
        Reply.answer("It is evening in Tokyo."),
    )
    runtime = Runtime.load(oryxos_workspace, oryxos_make_pm())
    try:
        result = ReActLoop(runtime).run_turn(runtime.agents.load("clock"), "Time in Tokyo?")
        assert result.success and result.answer == "It is evening in Tokyo."

        # the model was offered the server's tools, under their declared names
        offered = {t["function"]["name"] for t in oryxos_model_server.requests[0]["tools"]}
        assert {"get_current_time", "convert_time"} <= offered
        # the server's answer went back to the model
        tool_messages = [
            m for m in oryxos_model_server.requests[1]["messages"] if m["role"] == "tool"
        ]
        assert json.loads(tool_messages[-1]["content"])["timezone"] == "Asia/Tokyo"
        # the tool error went back as a retryable error the model could react to
        last = [m for m in oryxos_model_server.requests[2]["messages"] if m["role"] == "tool"]
        assert "Mars/Olympus_Mons" in last[-1]["content"]

        rows = runtime.storage.audit.tool_invocations(
            AuditQuery(agent="clock", tool_name="get_current_time", limit=10)
        ).items
        by_zone = {row.input["timezone"]: row for row in rows}
        assert set(by_zone) == {"Asia/Tokyo", "Mars/Olympus_Mons"}
        assert by_zone["Asia/Tokyo"].success and "Asia/Tokyo" in by_zone["Asia/Tokyo"].result
        assert not by_zone["Mars/Olympus_Mons"].success
        assert "Mars/Olympus_Mons" in by_zone["Mars/Olympus_Mons"].error_message
        assert all(row.session_id == result.session_id for row in rows)
    finally:
        runtime.close()
