"""The channel registry (runtime.notify): validation, CRUD, secrets, and a third-party type."""

from __future__ import annotations

import json
import urllib.request

import pytest

from oryxos.errors import ConfigError, ConflictError, NotFoundError, StartupError, UsageError
from oryxos.notify import Delivery, NotifyAdapter, NotifyService
from oryxos.runtime import Runtime
from oryxos.testing import inline_plugin


@pytest.fixture
def notify(oryxos_runtime):
    return oryxos_runtime.notify


def test_runtime_notify_is_one_service_with_the_builtin_types(oryxos_runtime):
    assert isinstance(oryxos_runtime.notify, NotifyService)
    assert oryxos_runtime.notify is oryxos_runtime.notify
    assert oryxos_runtime.notify.types() == ["dingtalk", "feishu", "webhook", "wecom"]
    for _, adapter in oryxos_runtime.notify_adapters.items():
        assert isinstance(adapter, NotifyAdapter)


def test_add_stores_a_channel_and_list_describes_it_without_the_secret(notify):
    notify.add(
        "team-lark",
        "feishu",
        "https://open.feishu.cn/open-apis/bot/v2/hook/abc",
        secret="${TEAM_LARK_SECRET}",
        description="  The team's group  ",
    )
    notify.add("ops", "wecom", "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k")
    notify.add("hook", "webhook", "http://10.0.0.5:8080/in", secret="literal-secret-1")

    assert notify.names() == ["hook", "ops", "team-lark"]
    described = {item["name"]: item for item in map(notify.describe, notify.list())}
    lark = described["team-lark"]
    assert lark["type"] == "feishu" and lark["description"] == "The team's group"
    assert lark["secret"] == "${TEAM_LARK_SECRET}" and lark["has_secret"] is True
    assert described["ops"]["secret"] is None and described["ops"]["has_secret"] is False
    assert described["hook"]["secret"] == "stored"
    assert "literal-secret-1" not in json.dumps(list(described.values()), default=str)


@pytest.mark.parametrize(
    ("name", "type_", "url", "message"),
    [
        ("Team Lark", "feishu", "https://x.example", "is not a slug"),
        ("-lark", "feishu", "https://x.example", "is not a slug"),
        ("x" * 65, "feishu", "https://x.example", "is not a slug"),
        (
            "lark",
            "lark",
            "https://x.example",
            "unknown notify channel type 'lark' (known types: dingtalk, feishu, webhook, wecom)",
        ),
        ("lark", "feishu", "ftp://x.example/hook", "must start with https:// or http://"),
        ("lark", "feishu", "open.feishu.cn/hook", "must start with https:// or http://"),
        ("lark", "feishu", "https:///path-only", "has no host"),
        ("lark", "feishu", "https://x.example:99999/", "is malformed"),
        ("lark", "feishu", "https://x.example/a b", "contains white space"),
        ("lark", "feishu", "https://user:pw@x.example/", "carries a user name or password"),
        ("lark", "feishu", "", "url is empty"),
    ],
)
def test_invalid_fields_are_clear_usage_errors(notify, name, type_, url, message):
    with pytest.raises(UsageError, match=None) as caught:
        notify.add(name, type_, url)
    assert message in str(caught.value)
    assert notify.list() == []


def test_a_duplicate_name_is_a_conflict(notify):
    notify.add("team-lark", "feishu", "https://a.example/")
    with pytest.raises(ConflictError, match="'team-lark' already exists"):
        notify.add("team-lark", "wecom", "https://b.example/")


@pytest.mark.parametrize("secret", ["${NOT CLOSED", "prefix-${VAR}", "${1BAD}"])
def test_a_secret_with_a_broken_reference_is_refused(notify, secret):
    with pytest.raises(UsageError, match=r"exactly \$\{VARIABLE\}"):
        notify.add("team-lark", "feishu", "https://a.example/", secret=secret)


def test_update_changes_only_what_is_given_and_can_clear(notify):
    notify.add("team-lark", "feishu", "https://a.example/", secret="s3cret-value", description="d")
    updated = notify.update("team-lark", url="https://b.example/hook", type="webhook")
    assert (updated.url, updated.type, updated.secret, updated.description) == (
        "https://b.example/hook",
        "webhook",
        "s3cret-value",
        "d",
    )
    assert updated.updated_at >= updated.created_at
    cleared = notify.update("team-lark", secret=None, description=None)
    assert cleared.secret is None and cleared.description is None
    with pytest.raises(UsageError, match="nothing to change"):
        notify.update("team-lark")
    with pytest.raises(UsageError, match="unknown notify channel type 'slack'"):
        notify.update("team-lark", type="slack")
    with pytest.raises(UsageError, match="has no host"):
        notify.update("team-lark", url="http://")


def test_unknown_names_list_the_registered_ones(notify):
    with pytest.raises(NotFoundError, match="no channel is registered; add one with"):
        notify.get("team-lark")
    notify.add("ops", "wecom", "https://a.example/")
    notify.add("team-lark", "feishu", "https://a.example/")
    for call in (
        lambda: notify.get("tema-lark"),
        lambda: notify.update("tema-lark", url="https://x.example"),
        lambda: notify.remove("tema-lark"),
        lambda: notify.send("tema-lark", "hi"),
    ):
        with pytest.raises(NotFoundError) as caught:
            call()
        assert str(caught.value) == (
            "no notify channel named 'tema-lark' (registered channels: ops, team-lark)"
        )
    notify.remove("ops")
    assert notify.names() == ["team-lark"]


def test_an_unset_secret_variable_stops_delivery_before_any_request(notify, receiver):
    notify.add("team-lark", "feishu", receiver.url(), secret="${TEST_NOTIFY_UNSET_VAR}")
    with pytest.raises(ConfigError, match="environment variable TEST_NOTIFY_UNSET_VAR is not set"):
        notify.send("team-lark", "hi")
    assert receiver.requests == []


def test_empty_content_is_refused(notify, receiver):
    notify.add("team-lark", "feishu", receiver.url())
    with pytest.raises(UsageError, match="empty"):
        notify.send("team-lark", "  \n")
    assert receiver.requests == []


class RaisingAdapter:
    def deliver(self, channel, content, *, secret, timeout):
        raise RuntimeError("boom")


def test_an_adapter_that_raises_is_a_failed_delivery_not_a_crash(oryxos_workspace, oryxos_make_pm):
    plugin = inline_plugin(
        "broken-type",
        oryxos_register_notify_adapters=lambda register: register("bad", RaisingAdapter()),
    )
    with Runtime.load(oryxos_workspace, oryxos_make_pm([plugin])) as runtime:
        runtime.notify.add("x", "bad", "https://a.example/")
        delivery = runtime.notify.send("x", "hi")
    assert not delivery.ok and not delivery.retryable
    assert delivery.detail == "bad adapter failed: RuntimeError: boom"


def test_an_adapter_without_deliver_is_a_startup_error_naming_the_plugin(
    oryxos_workspace, oryxos_make_pm
):
    plugin = inline_plugin(
        "no-deliver", oryxos_register_notify_adapters=lambda register: register("odd", object())
    )
    runtime = Runtime.load(oryxos_workspace, oryxos_make_pm([plugin]))
    with runtime, pytest.raises(StartupError, match="plugin no-deliver: notify channel type 'odd'"):
        runtime.notify.types()


def test_a_channel_whose_type_is_no_longer_provided_is_reported(oryxos_workspace, oryxos_make_pm):
    with Runtime.load(oryxos_workspace, oryxos_make_pm()) as runtime:
        runtime.notify.add("team-lark", "feishu", "https://a.example/")
    with Runtime.load(oryxos_workspace, oryxos_make_pm(disabled=["notify"])) as runtime:
        assert runtime.notify.types() == []
        with pytest.raises(NotFoundError, match="type 'feishu', which no loaded plugin provides"):
            runtime.notify.send("team-lark", "hi")
        with pytest.raises(UsageError, match=r"known types: none \(is the notify plugin disabled"):
            runtime.notify.add("other", "feishu", "https://a.example/")


# --- A third-party channel type, added without touching the kernel ------------------------


class SlackAdapter:
    """What a third-party plugin would ship: a Slack incoming-webhook adapter (stdlib only)."""

    def deliver(self, channel, content, *, secret, timeout):
        request = urllib.request.Request(
            channel.url,
            data=json.dumps({"text": content}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            ok = reply.status == 200 and reply.read() == b"ok"
        return Delivery(ok, "Slack accepted the message" if ok else "Slack refused", False, 200)


def test_a_third_party_plugin_adds_a_slack_type_without_kernel_changes(
    oryxos_workspace, oryxos_make_pm, oryxos_cli, receiver
):
    def oryxos_register_notify_adapters(register):
        register("slack", SlackAdapter())

    plugin = inline_plugin(
        "oryxos-slack", oryxos_register_notify_adapters=oryxos_register_notify_adapters
    )
    receiver.default = (200, b"ok", 0)

    added = oryxos_cli.invoke(
        ["notify", "add", "eng-slack", "--type", "slack", "--url", receiver.url("/services/T/B/x")],
        plugins=[plugin],
    )
    assert added.exit_code == 0, added.output
    with Runtime.load(oryxos_workspace, oryxos_make_pm([plugin])) as runtime:
        assert runtime.notify_adapters.owner("slack") == "oryxos-slack"
        assert "slack" in runtime.notify.types() and "feishu" in runtime.notify.types()
        delivery = runtime.notify.send("eng-slack", "release 1.2 is out")
    assert delivery.ok and delivery.detail == "Slack accepted the message"
    assert receiver.requests[0].json == {"text": "release 1.2 is out"}

    # Without the plugin the type is unknown again, and the error says which types exist.
    refused = oryxos_cli.invoke(
        ["notify", "add", "other", "--type", "slack", "--url", receiver.url()]
    )
    assert refused.exit_code == 2
    assert (
        "unknown notify channel type 'slack' (known types: dingtalk, feishu, webhook, wecom)"
        in (refused.output)
    )


def test_a_type_registered_twice_names_both_plugins(oryxos_workspace, oryxos_make_pm):
    plugin = inline_plugin(
        "my-feishu",
        oryxos_register_notify_adapters=lambda register: register("feishu", SlackAdapter()),
    )
    runtime = Runtime.load(oryxos_workspace, oryxos_make_pm([plugin]))
    with runtime, pytest.raises(StartupError, match="registered twice: by plugin") as caught:
        runtime.notify.types()
    assert "my-feishu" in str(caught.value) and "notify" in str(caught.value)
