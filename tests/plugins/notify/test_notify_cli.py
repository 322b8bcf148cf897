"""``oryxos notify list|add|update|remove|test`` on a real workspace; secrets never printed."""

from __future__ import annotations

import json

FEISHU_OK = {"code": 0, "data": {}, "msg": "success"}
SECRET = "s3cret-lark-value-9876"


def test_add_list_update_remove(oryxos_cli, monkeypatch):
    monkeypatch.setenv("TEST_LARK_SECRET", SECRET)
    empty = oryxos_cli.invoke(["notify", "list"])
    assert empty.exit_code == 0
    assert (
        "no notify channels" in empty.output and "dingtalk, feishu, webhook, wecom" in empty.output
    )

    added = oryxos_cli.invoke(
        [
            "notify", "add", "team-lark", "--type", "feishu",
            "--url", "https://open.feishu.cn/open-apis/bot/v2/hook/abc",
            "--secret-env", "TEST_LARK_SECRET", "--description", "Team group",
        ]
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    assert added.output == "added notify channel team-lark (feishu)\n"

    listed = oryxos_cli.invoke(["notify", "list"])
    lines = listed.output.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "URL", "SECRET", "DESCRIPTION"]
    assert lines[1].split() == [
        "team-lark",
        "feishu",
        "https://open.feishu.cn/open-apis/bot/v2/hook/abc",
        "${TEST_LARK_SECRET}",
        "Team",
        "group",
    ]
    [item] = json.loads(oryxos_cli.invoke(["notify", "list", "--json"]).output)
    assert item["name"] == "team-lark" and item["secret"] == "${TEST_LARK_SECRET}"
    assert item["has_secret"] is True and set(item) >= {"created_at", "updated_at", "url"}

    updated = oryxos_cli.invoke(
        ["notify", "update", "team-lark", "--url", "https://open.larksuite.com/h/x", "-d", ""]
    )
    assert updated.exit_code == 0, updated.output
    [item] = json.loads(oryxos_cli.invoke(["notify", "list", "--json"]).output)
    assert item["url"] == "https://open.larksuite.com/h/x" and item["description"] is None
    assert item["secret"] == "${TEST_LARK_SECRET}"

    assert oryxos_cli.invoke(["notify", "update", "team-lark", "--no-secret"]).exit_code == 0
    [item] = json.loads(oryxos_cli.invoke(["notify", "list", "--json"]).output)
    assert item["secret"] is None and item["has_secret"] is False

    removed = oryxos_cli.invoke(["notify", "remove", "team-lark"])
    assert removed.exit_code == 0 and removed.output == "removed notify channel team-lark\n"
    assert json.loads(oryxos_cli.invoke(["notify", "list", "--json"]).output) == []


def test_a_stored_secret_is_never_printed(oryxos_cli):
    added = oryxos_cli.invoke(
        ["notify", "add", "hook", "--type", "webhook", "--url", "https://a.example/in",
         "--secret-stdin"],
        input=SECRET + "\n",
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    for args in (["notify", "list"], ["notify", "list", "--json"], ["status", "--json"]):
        result = oryxos_cli.invoke(args)
        assert result.exit_code == 0
        assert SECRET not in result.output
    assert "stored" in oryxos_cli.invoke(["notify", "list"]).output


def test_usage_errors_exit_2_with_one_clear_line(oryxos_cli):
    cases = [
        (["notify", "add", "x", "--type", "slack", "--url", "https://a.example"],
         "error: unknown notify channel type 'slack' (known types: dingtalk, feishu, webhook, "
         "wecom)"),
        (["notify", "add", "x", "--type", "wecom", "--url", "qyapi.weixin.qq.com"],
         "must start with https:// or http://"),
        (["notify", "add", "x", "--type", "wecom", "--url", "https://a.example",
          "--secret-env", "NOT-A-VAR"], "is not an environment variable name"),
        (["notify", "update", "nope", "--url", "https://a.example"],
         "error: no notify channel named 'nope'"),
        (["notify", "remove", "nope"], "error: no notify channel named 'nope'"),
        (["notify", "test", "nope"], "error: no notify channel named 'nope'"),
    ]  # fmt: skip
    for args, message in cases:
        result = oryxos_cli.invoke(args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
        assert "Traceback" not in result.output
    missing = oryxos_cli.invoke(["notify", "add", "x", "--url", "https://a.example"])
    assert missing.exit_code == 2 and "Missing option '--type'" in missing.output


def test_test_command_delivers_and_reports_vendor_errors_with_exit_1(oryxos_cli, receiver):
    receiver.reply(200, FEISHU_OK)
    receiver.reply(200, {"code": 19024, "msg": "Key Words Not Found"})
    assert (
        oryxos_cli.invoke(
            ["notify", "add", "team-lark", "--type", "feishu", "--url", receiver.url()]
        ).exit_code
        == 0
    )
    ok = oryxos_cli.invoke(["notify", "test", "team-lark", "-m", "hello from the CLI"])
    assert ok.exit_code == 0, ok.output
    assert ok.output == "delivered to team-lark: Feishu accepted the text message\n"
    assert receiver.requests[0].json["content"] == {"text": "hello from the CLI"}

    failed = oryxos_cli.invoke(["notify", "test", "team-lark", "--json"])
    assert failed.exit_code == 1
    report = json.loads(failed.stdout)
    assert report == {
        "channel": "team-lark",
        "ok": False,
        "detail": "Feishu error 19024: Key Words Not Found",
        "status_code": 200,
        "attempts": 1,
    }
    default_message = receiver.requests[1].json["content"]["text"]
    assert default_message.startswith("OryxOS test message for notify channel team-lark")


def test_the_secret_is_in_neither_output_nor_log_even_when_the_vendor_echoes_it(
    oryxos_cli, receiver, monkeypatch
):
    monkeypatch.setenv("TEST_LARK_SECRET", SECRET)
    receiver.reply(200, {"code": 19021, "msg": f"sign match fail (secret {SECRET})"})
    oryxos_cli.invoke(
        ["notify", "add", "team-lark", "--type", "feishu", "--url", receiver.url(),
         "--secret-env", "TEST_LARK_SECRET"]
    )  # fmt: skip
    result = oryxos_cli.invoke(["-vv", "notify", "test", "team-lark"])
    assert result.exit_code == 1
    assert "sign match fail (secret ***)" in result.output
    sign = receiver.requests[0].json["sign"]  # the secret was really used
    assert sign and SECRET not in receiver.requests[0].body.decode()

    log = (oryxos_cli.workspace.logs_dir / "oryxos.log").read_text()
    assert "notify team-lark (feishu): failed after 1 attempt(s)" in log
    assert SECRET not in log and SECRET not in result.output
