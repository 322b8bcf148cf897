"""``oryxos audit tools|llm``: the audit rows of real turns, filtered, as a table or JSON."""

from __future__ import annotations

import json

import pytest

from oryxos.testing import Reply, use_model_server


@pytest.fixture
def audited(oryxos_cli, oryxos_workspace, oryxos_model_server):
    """Two chat turns: one calls current_time and a tool that does not exist; one retries a 500."""
    use_model_server(oryxos_workspace, oryxos_model_server, retry_backoff=0.01)
    (oryxos_workspace.agents_dir / "clock").mkdir()
    (oryxos_workspace.agents_dir / "clock" / "AGENT.md").write_text(
        "---\nname: clock\nprovider:\n  name: default\ntools: [current_time]\n---\nTell time.\n"
    )
    oryxos_model_server.script(
        Reply.tools(("current_time", {"timezone": "Asia/Shanghai"}), ("teleport", {"to": "x"})),
        Reply.answer("It is late."),
        Reply.error(500),
        Reply.answer("Hi."),
    )
    for message, session in (("time?", "s-time"), ("hello", "s-hello")):
        result = oryxos_cli.invoke(["chat", "-p", "clock", "-m", message, "--session", session])
        assert result.exit_code == 0, result.output
    return oryxos_cli


def test_audit_tools_lists_every_call_newest_first_with_filters(audited):
    rows = json.loads(audited.invoke(["audit", "tools", "--json"]).output)
    assert rows["total"] == 2
    assert [r["tool_name"] for r in rows["tool_invocations"]] == ["teleport", "current_time"]
    assert rows["tool_invocations"][1]["input"] == {"timezone": "Asia/Shanghai"}
    failed = json.loads(audited.invoke(["audit", "tools", "--failed", "--json"]).output)
    assert [r["tool_name"] for r in failed["tool_invocations"]] == ["teleport"]
    ok = json.loads(audited.invoke(["audit", "tools", "--ok", "--tool", "current_time",
                                    "--json"]).output)  # fmt: skip
    assert ok["total"] == 1 and ok["tool_invocations"][0]["success"] is True
    text = audited.invoke(["audit", "tools", "--agent", "clock"]).output
    assert "unknown tool 'teleport'" in text and "FAILED" in text
    assert '{"timezone": "Asia/Shanghai"}' in text
    none = audited.invoke(["audit", "tools", "--session", "s-hello"])
    assert none.exit_code == 0 and "no tool calls match" in none.output


def test_audit_llm_shows_each_attempt_and_time_filters(audited):
    rows = json.loads(audited.invoke(["audit", "llm", "--json"]).output)["llm_calls"]
    assert [(r["session_id"], r["attempt"], r["success"]) for r in rows] == [
        ("s-hello", 2, True),
        ("s-hello", 1, False),
        ("s-time", 1, True),
        ("s-time", 1, True),
    ]
    text = audited.invoke(["audit", "llm", "--failed"]).output
    assert "HTTP 500" in text and "s-hello" in text and "s-time" not in text
    assert (
        json.loads(audited.invoke(["audit", "llm", "--since", "1h", "--json"]).output)["total"] == 4
    )
    assert (
        json.loads(audited.invoke(["audit", "llm", "--until", "2h", "--json"]).output)["total"] == 0
    )
    limited = audited.invoke(["audit", "llm", "--limit", "1"]).output
    assert "(1 of 4, newest first" in limited
    future = audited.invoke(["audit", "llm", "--since", "2999-01-01", "--provider", "default"])
    assert future.exit_code == 0 and "no model calls match" in future.output


@pytest.mark.parametrize("value", ["yesterday", "5 weeks", "2026-13-01"])
def test_a_bad_time_names_the_option_and_the_forms(oryxos_cli, value):
    result = oryxos_cli.invoke(["audit", "tools", "--since", value])
    assert result.exit_code == 2
    assert "Invalid value for '--since'" in result.output and "ISO 8601" in result.output
    assert "Traceback" not in result.output
