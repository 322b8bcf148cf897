"""The notify tool: registered in the catalog, resolves the channel name at call time."""

from __future__ import annotations

import pytest

from oryxos.catalog import ToolContext

FEISHU_OK = {"code": 0, "data": {}, "msg": "success"}


@pytest.fixture
def ctx(oryxos_runtime) -> ToolContext:
    return oryxos_runtime.catalog.context(
        agent="reporter", session_id="s-1", runtime=oryxos_runtime, config=oryxos_runtime.config
    )


def call(runtime, ctx, **arguments):
    tool = runtime.catalog.build("notify", ctx)
    return tool.execute(arguments, ctx)


def test_notify_is_in_the_catalog_in_the_notify_group(oryxos_runtime, ctx):
    entry = oryxos_runtime.catalog.get("notify")
    assert entry.plugin == "notify" and entry.groups == frozenset({"notify"})
    assert oryxos_runtime.catalog.select(["@notify"], ctx).names == ["notify"]
    tool = oryxos_runtime.catalog.build("notify", ctx)
    assert tool.input_schema["required"] == ["channel", "content"]
    assert not getattr(tool, "sandbox_args", {})  # the registry is the control, not the whitelist


def test_the_description_names_the_registered_channels(oryxos_runtime, ctx):
    before = oryxos_runtime.catalog.build("notify", ctx).description
    assert "Registered channels" not in before
    oryxos_runtime.notify.add("team-lark", "feishu", "https://a.example/")
    oryxos_runtime.notify.add("ops", "wecom", "https://a.example/")
    after = oryxos_runtime.catalog.build("notify", ctx).description
    assert after.endswith("Registered channels: ops, team-lark.")


def test_delivers_and_says_so(oryxos_runtime, ctx, receiver):
    receiver.default = (200, FEISHU_OK, 0)
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url())
    result = call(oryxos_runtime, ctx, channel="team-lark", content="the report")
    assert result.success, result.error_message
    assert result.content == "delivered to team-lark: Feishu accepted the text message"
    assert receiver.requests[0].json["content"] == {"text": "the report"}


def test_the_name_is_resolved_at_call_time(oryxos_runtime, ctx, receiver):
    receiver.default = (200, FEISHU_OK, 0)
    tool = oryxos_runtime.catalog.build("notify", ctx)  # built before the channel exists
    missing = tool.execute({"channel": "team-lark", "content": "x"}, ctx)
    assert not missing.success
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url("/first"))
    assert tool.execute({"channel": "team-lark", "content": "x"}, ctx).success
    oryxos_runtime.notify.update("team-lark", url=receiver.url("/second"))
    assert tool.execute({"channel": "team-lark", "content": "x"}, ctx).success
    assert [r.path for r in receiver.requests] == ["/first", "/second"]


def test_an_unknown_channel_is_a_non_retryable_error_listing_the_names(oryxos_runtime, ctx):
    oryxos_runtime.notify.add("team-lark", "feishu", "https://a.example/")
    oryxos_runtime.notify.add("ops", "wecom", "https://a.example/")
    result = call(oryxos_runtime, ctx, channel="team-larks", content="x")
    assert not result.success and not result.retryable
    assert result.error_message == (
        "no notify channel named 'team-larks' (registered channels: ops, team-lark)"
    )


def test_a_vendor_error_is_retryable_and_carries_the_vendor_message(oryxos_runtime, ctx, receiver):
    receiver.reply(200, {"code": 9499, "msg": "Bad Request", "data": {}})
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url())
    result = call(oryxos_runtime, ctx, channel="team-lark", content="x")
    assert not result.success and result.retryable
    assert result.error_message == "delivery to team-lark failed: Feishu error 9499: Bad Request"


def test_a_vendor_outage_reports_both_attempts(oryxos_runtime, ctx, receiver):
    receiver.default = (503, {"msg": "unavailable"}, 0)
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url())
    result = call(oryxos_runtime, ctx, channel="team-lark", content="x")
    assert not result.success and result.retryable
    assert result.error_message == (
        'delivery to team-lark failed after 2 attempts: HTTP 503 from 127.0.0.1: {"msg": '
        '"unavailable"}'
    )


def test_a_missing_secret_variable_is_not_retryable(oryxos_runtime, ctx, receiver):
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url(), secret="${TEST_NOTIFY_NOPE}")
    result = call(oryxos_runtime, ctx, channel="team-lark", content="x")
    assert not result.success and not result.retryable
    assert "environment variable TEST_NOTIFY_NOPE is not set" in result.error_message
    assert receiver.requests == []


def test_empty_content_is_retryable(oryxos_runtime, ctx, receiver):
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url())
    result = call(oryxos_runtime, ctx, channel="team-lark", content=" ")
    assert not result.success and result.retryable


def test_a_secret_echoed_by_the_vendor_is_masked_in_the_result(
    oryxos_runtime, ctx, receiver, monkeypatch
):
    monkeypatch.setenv("TEST_LARK_SECRET", "echoed-secret-4242")
    receiver.reply(200, {"code": 19021, "msg": "sign for echoed-secret-4242 does not match"})
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url(), secret="${TEST_LARK_SECRET}")
    result = call(oryxos_runtime, ctx, channel="team-lark", content="x")
    assert result.error_message == (
        "delivery to team-lark failed: Feishu error 19021: sign for *** does not match"
    )
