"""Chat-bot webhook URLs carry the bot's token: listings mask it, edits keep it, logs hide it."""

from __future__ import annotations

import json
import logging

import pytest

from oryxos.secrets import mask_url, url_secrets

FEISHU = "https://open.feishu.cn/open-apis/bot/v2/hook/2f1c9a7e-5b3d-4e8f-9a61-0c4d7b2e8f13"
WECOM = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa"
DINGTALK = "https://oapi.dingtalk.com/robot/send?access_token=" + "ab12" * 16


@pytest.mark.parametrize(
    "url,shown",
    [
        (FEISHU, "https://open.feishu.cn/open-apis/bot/v2/hook/***"),
        (WECOM, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=***"),
        (DINGTALK, "https://oapi.dingtalk.com/robot/send?access_token=***"),
        ("http://127.0.0.1:8080/in", "http://127.0.0.1:8080/in"),  # nothing secret-looking
        (
            "https://hooks.example.com/services/T00/B00/" + "x" * 24,
            "https://hooks.example.com/services/T00/B00/***",
        ),
    ],
)
def test_mask_url(url, shown):
    assert mask_url(url) == shown
    assert all(part not in shown for part in url_secrets(url))


def test_listings_show_the_url_without_its_token(oryxos_runtime, oryxos_cli):
    oryxos_runtime.notify.add("ops", "wecom", WECOM)
    record = oryxos_runtime.notify.get("ops")
    assert record.url == WECOM  # stored whole: deliveries need it
    assert oryxos_runtime.notify.describe(record)["url"].endswith("key=***")
    listed = oryxos_cli.invoke(["notify", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert "693a91f6" not in listed.output
    assert json.loads(listed.output)[0]["url"].endswith("key=***")


def test_sending_back_the_masked_url_keeps_the_real_one(oryxos_runtime):
    notify = oryxos_runtime.notify
    notify.add("lark", "feishu", FEISHU)
    notify.update("lark", url=mask_url(FEISHU), description="edited in the console")
    assert notify.get("lark").url == FEISHU
    notify.update("lark", url="https://open.feishu.cn/open-apis/bot/v2/hook/" + "n" * 36)
    assert notify.get("lark").url.endswith("n" * 36)


def test_a_delivery_registers_the_token_with_the_log_mask(oryxos_runtime, caplog):
    from oryxos.logs import SecretMaskFilter

    oryxos_runtime.notify.add(
        "ding", "dingtalk", "http://127.0.0.1:9/robot/send?access_token=" + "cd34" * 16
    )
    oryxos_runtime.notify.send("ding", "hello")  # nothing listens on port 9: a failed delivery
    record = logging.makeLogRecord(
        {"msg": "failed: http://127.0.0.1:9/robot/send?access_token=" + "cd34" * 16}
    )
    SecretMaskFilter().filter(record)
    assert "cd34" not in record.getMessage()
