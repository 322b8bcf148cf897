"""The notify tool through the real executor: every call audited, the secret in no row."""

from __future__ import annotations

import json

from oryxos.storage import AuditQuery
from oryxos.tools import ToolCall

SECRET = "lark-e2e-secret-31337"


def test_executor_audits_a_failed_delivery_without_the_secret(
    oryxos_runtime, receiver, monkeypatch
):
    monkeypatch.setenv("TEAM_LARK_SECRET", SECRET)
    receiver.reply(200, {"code": 19021, "msg": f"sign match fail for {SECRET}"})
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url(), secret="${TEAM_LARK_SECRET}")
    ctx = oryxos_runtime.catalog.context(
        agent="reporter", session_id="s-9", runtime=oryxos_runtime, config=oryxos_runtime.config
    )
    result = oryxos_runtime.executor.run(
        ToolCall("notify", {"channel": "team-lark", "content": "hello"}), ctx
    )
    assert not result.success and result.retryable
    assert result.error_message == (
        "delivery to team-lark failed: Feishu error 19021: sign match fail for ***"
    )
    unknown = oryxos_runtime.executor.run(
        ToolCall("notify", {"channel": "nope", "content": "hello"}), ctx
    )
    assert not unknown.success and not unknown.retryable
    rows = oryxos_runtime.storage.audit.tool_invocations(AuditQuery(tool_name="notify")).items
    assert len(rows) == 2 and not any(row.success for row in rows)
    assert "registered channels: team-lark" in rows[0].error_message
    for row in rows:
        assert SECRET not in json.dumps(row.as_dict(), default=str)


def test_executor_audits_a_delivery(oryxos_runtime, receiver, monkeypatch):
    monkeypatch.setenv("TEAM_LARK_SECRET", SECRET)
    receiver.default = (200, {"errcode": 0, "errmsg": "ok"}, 0)
    oryxos_runtime.notify.add("ops", "dingtalk", receiver.url(), secret="${TEAM_LARK_SECRET}")
    ctx = oryxos_runtime.catalog.context(
        agent="reporter", session_id="s-10", runtime=oryxos_runtime, config=oryxos_runtime.config
    )
    call = ToolCall("notify", {"channel": "ops", "content": "nightly build green"})
    result = oryxos_runtime.executor.run(call, ctx, allowed=["notify"])
    assert (
        result.success and result.content == "delivered to ops: DingTalk accepted the text message"
    )
    [row] = oryxos_runtime.storage.audit.tool_invocations(AuditQuery(tool_name="notify")).items
    assert row.success and (row.agent, row.session_id) == ("reporter", "s-10")
    assert row.input == {"channel": "ops", "content": "nightly build green"}
    assert SECRET not in json.dumps(row.as_dict(), default=str)
    assert receiver.requests[0].query["sign"]  # the secret was used to sign
