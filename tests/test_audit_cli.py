"""``oryxos audit tools|llm``: the audit rows of real turns, filtered, as a table or JSON."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta

import pytest

from oryxos.storage import ToolInvocationRecord
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


def test_export_writes_every_matching_row_as_json_lines_or_csv(audited, monkeypatch, tmp_path):
    from oryxos.commands import audit_cmd

    monkeypatch.setattr(audit_cmd, "EXPORT_PAGE", 1)  # one row per query: paging is exercised
    lines = audited.invoke(["audit", "export", "llm"]).output.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["session_id"], r["attempt"]) for r in rows] == [
        ("s-hello", 2),
        ("s-hello", 1),
        ("s-time", 1),
        ("s-time", 1),
    ]
    only = audited.invoke(["audit", "export", "tools", "--failed"]).output.splitlines()
    assert [json.loads(line)["tool_name"] for line in only] == ["teleport"]

    target = tmp_path / "tools.csv"
    result = audited.invoke(["audit", "export", "tools", "--format", "csv", "-o", str(target)])
    assert result.exit_code == 0 and "exported 2 tool calls to" in result.output
    with target.open(newline="", encoding="utf-8") as f:
        table_rows = list(csv.DictReader(f))
    assert [r["tool_name"] for r in table_rows] == ["teleport", "current_time"]
    assert json.loads(table_rows[1]["input"]) == {"timezone": "Asia/Shanghai"}
    assert table_rows[0]["success"] == "False" and "unknown tool" in table_rows[0]["error_message"]


def test_prune_counts_first_then_deletes_old_rows_and_logs_it(audited, oryxos_workspace):
    from oryxos.runtime import Runtime

    runtime = Runtime.load(oryxos_workspace)
    old = datetime.now(UTC) - timedelta(days=100)
    runtime.storage.audit.record_tool_invocation(
        ToolInvocationRecord("read_file", {"path": "/old"}, success=True, created_at=old)
    )
    runtime.close()

    dry = json.loads(audited.invoke(["audit", "prune", "--before", "90d", "--json"]).output)
    assert dry == {"before": dry["before"], "deleted": False, "tool_invocations": 1,
                   "llm_calls": 0}  # fmt: skip
    result = audited.invoke(["audit", "prune", "--before", "90d", "--yes"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("deleted 1 tool call(s) and 0 model call(s) created before")
    rows = json.loads(audited.invoke(["audit", "tools", "--json"]).output)
    assert rows["total"] == 2  # the turns' rows, newer than the cut-off, are kept
    log = (oryxos_workspace.path / "logs" / "oryxos.log").read_text()
    assert "audit pruned: 1 tool call(s) and 0 model call(s)" in log


def test_prune_refuses_a_future_cut_off_and_needs_one(oryxos_cli):
    future = oryxos_cli.invoke(["audit", "prune", "--before", "2999-01-01"])
    assert future.exit_code == 2 and "is in the future" in future.output
    missing = oryxos_cli.invoke(["audit", "prune", "--yes"])
    assert missing.exit_code == 2 and "Missing option '--before'" in missing.output
