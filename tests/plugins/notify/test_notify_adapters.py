"""Each built-in adapter against a receiver on 127.0.0.1 playing the vendor: exact bodies,
query parameters and signatures (computed here, independently), and the vendors' errors."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import quote_plus

import pytest

FEISHU_OK = {"code": 0, "data": {}, "msg": "success"}
ERRCODE_OK = {"errcode": 0, "errmsg": "ok"}


def b64_hmac(key: bytes, message: bytes) -> str:
    return base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode()


@pytest.fixture
def notify(oryxos_runtime):
    return oryxos_runtime.notify


# --- Feishu / Lark ------------------------------------------------------------------------


def test_feishu_text_with_signature_in_the_body(notify, receiver, monkeypatch):
    monkeypatch.setenv("TEST_LARK_SECRET", "lark-signing-secret")
    receiver.default = (200, FEISHU_OK, 0)
    notify.add(
        "team-lark",
        "feishu",
        receiver.url("/open-apis/bot/v2/hook/tok-1"),
        secret="${TEST_LARK_SECRET}",
    )
    before = int(time.time())
    delivery = notify.send("team-lark", "build 42 passed")
    after = int(time.time())

    assert delivery.ok, delivery.detail
    assert delivery.attempts == 1 and delivery.status_code == 200
    assert delivery.detail == "Feishu accepted the text message"
    [request] = receiver.requests
    assert request.path == "/open-apis/bot/v2/hook/tok-1"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    body = request.json
    timestamp = body["timestamp"]
    assert isinstance(timestamp, str) and before <= int(timestamp) <= after  # seconds
    sign = b64_hmac(f"{timestamp}\nlark-signing-secret".encode(), b"")
    assert body == {
        "timestamp": timestamp,
        "sign": sign,
        "msg_type": "text",
        "content": {"text": "build 42 passed"},
    }


def test_feishu_markdown_becomes_a_card_and_no_secret_means_no_signature(notify, receiver):
    receiver.default = (200, FEISHU_OK, 0)
    notify.add("team-lark", "feishu", receiver.url())
    report = "## Daily report\n- **3** builds\n- [details](https://ci.example.com/42)"
    delivery = notify.send("team-lark", report)
    assert delivery.ok and delivery.detail == "Feishu accepted the card (Markdown) message"
    assert receiver.requests[0].json == {
        "msg_type": "interactive",
        "card": {"elements": [{"tag": "markdown", "content": report}]},
    }


def test_feishu_older_status_code_reply_counts(notify, receiver):
    receiver.reply(200, {"StatusCode": 0, "StatusMessage": "success"})
    notify.add("team-lark", "feishu", receiver.url())
    assert notify.send("team-lark", "hi").ok


def test_feishu_error_code_is_a_failure_with_the_vendor_message_and_no_retry(notify, receiver):
    receiver.reply(
        200,
        {
            "code": 19021,
            "data": {},
            "msg": "sign match fail or timestamp is not within one hour from current time",
        },
    )
    notify.add("team-lark", "feishu", receiver.url())
    delivery = notify.send("team-lark", "hi")
    assert not delivery.ok and not delivery.retryable
    assert delivery.detail == (
        "Feishu error 19021: sign match fail or timestamp is not within one hour from current time"
    )
    assert len(receiver.requests) == 1


def test_http_200_without_a_result_code_is_not_success(notify, receiver):
    receiver.reply(200, {"hello": "world"})
    notify.add("team-lark", "feishu", receiver.url())
    delivery = notify.send("team-lark", "hi")
    assert not delivery.ok
    assert "Feishu replied without a result code" in delivery.detail


# --- WeCom --------------------------------------------------------------------------------


def test_wecom_text_and_markdown_bodies(notify, receiver):
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add("ops-wecom", "wecom", receiver.url("/cgi-bin/webhook/send", "key=k-123"))
    assert notify.send("ops-wecom", "disk 91% on db-1").ok
    assert notify.send("ops-wecom", "# Alert\n> disk **91%**").ok
    text, markdown = receiver.requests
    assert text.path == "/cgi-bin/webhook/send" and text.query == {"key": "k-123"}
    assert text.json == {"msgtype": "text", "text": {"content": "disk 91% on db-1"}}
    assert markdown.json == {
        "msgtype": "markdown",
        "markdown": {"content": "# Alert\n> disk **91%**"},
    }


def test_wecom_errcode_is_a_failure_with_the_vendor_message(notify, receiver):
    receiver.reply(200, {"errcode": 93000, "errmsg": "invalid webhook url"})
    notify.add("ops-wecom", "wecom", receiver.url())
    delivery = notify.send("ops-wecom", "hi")
    assert not delivery.ok
    assert delivery.detail == "WeCom error 93000: invalid webhook url"


def test_wecom_long_text_is_split_at_line_ends_within_2048_bytes(notify, receiver):
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add("ops-wecom", "wecom", receiver.url())
    lines = [f"第{i}行：磁盘使用率过高，请处理。" for i in range(120)]  # CJK: 3 bytes a character
    content = "\n".join(lines)
    assert len(content.encode()) > 2 * 2048

    delivery = notify.send("ops-wecom", content)

    parts = [r.json["text"]["content"] for r in receiver.requests]
    assert len(parts) == 3
    assert all(len(p.encode()) <= 2048 for p in parts)
    assert "".join(parts) == content
    assert all(p.endswith("\n") for p in parts[:-1])  # cut at line ends
    assert delivery.ok
    total = len(content.encode())
    assert delivery.detail == (
        f"WeCom accepted the text message (split into 3 messages: the content is {total} "
        "bytes and one message holds at most 2048)"
    )


def test_wecom_markdown_limit_is_4096_bytes(notify, receiver):
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add("ops-wecom", "wecom", receiver.url())
    content = "# Report\n" + "\n".join(f"- item {i:04d}" for i in range(500))  # ≈ 5.5 kB
    assert notify.send("ops-wecom", content).ok
    parts = [r.json["markdown"]["content"] for r in receiver.requests]
    assert len(parts) == 2 and all(len(p.encode()) <= 4096 for p in parts)
    assert len(parts[0].encode()) > 2048  # the markdown limit, not the text one


def test_wecom_content_beyond_five_messages_is_truncated_and_says_so(notify, receiver):
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add("ops-wecom", "wecom", receiver.url())
    content = "x" * (2048 * 7)  # one line, cut between characters
    delivery = notify.send("ops-wecom", content)
    parts = [r.json["text"]["content"] for r in receiver.requests]
    assert len(parts) == 5
    assert all(len(p.encode()) <= 2048 for p in parts)
    assert parts[-1].endswith("\n[truncated by OryxOS]")
    assert delivery.ok and "truncated: the content is 14336 bytes" in delivery.detail


def test_wecom_failure_after_a_delivered_part_is_not_retried(notify, receiver):
    receiver.reply(200, ERRCODE_OK)
    receiver.reply(500, {"error": "busy"})
    notify.add("ops-wecom", "wecom", receiver.url())
    delivery = notify.send("ops-wecom", "a" * 3000)
    assert not delivery.ok and not delivery.retryable
    assert delivery.detail.startswith("message 2 of 2 failed after 1 were delivered: HTTP 500")
    assert len(receiver.requests) == 2  # part 1 was not sent twice


# --- DingTalk -----------------------------------------------------------------------------


def test_dingtalk_signs_with_timestamp_and_sign_query_parameters(notify, receiver):
    secret = "SECf0e1d2c3b4a5+/="
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add(
        "ops-ding", "dingtalk", receiver.url("/robot/send", "access_token=tok9"), secret=secret
    )
    before = int(time.time() * 1000)
    delivery = notify.send("ops-ding", "deploy finished")
    after = int(time.time() * 1000)

    assert delivery.ok and delivery.detail == "DingTalk accepted the text message"
    [request] = receiver.requests
    assert request.path == "/robot/send"
    query = request.query
    assert set(query) == {"access_token", "timestamp", "sign"}
    assert query["access_token"] == "tok9"
    timestamp = query["timestamp"]
    assert before <= int(timestamp) <= after  # milliseconds
    expected = b64_hmac(secret.encode(), f"{timestamp}\n{secret}".encode())
    assert query["sign"] == expected
    assert request.raw_query.endswith(f"&sign={quote_plus(expected)}")  # URL-encoded once
    assert request.json == {"msgtype": "text", "text": {"content": "deploy finished"}}


def test_dingtalk_markdown_has_a_title_from_the_first_line(notify, receiver):
    receiver.default = (200, ERRCODE_OK, 0)
    notify.add("ops-ding", "dingtalk", receiver.url("/robot/send", "access_token=t"))
    content = "### Weekly **digest**\n1. merged 4 PRs"
    assert notify.send("ops-ding", content).ok
    request = receiver.requests[0]
    assert request.query == {"access_token": "t"}  # no secret, no signature
    assert request.json == {
        "msgtype": "markdown",
        "markdown": {"title": "Weekly digest", "text": content},
    }


def test_dingtalk_errcode_is_a_failure(notify, receiver):
    receiver.reply(200, {"errcode": 310000, "errmsg": "sign not match"})
    notify.add("ops-ding", "dingtalk", receiver.url())
    delivery = notify.send("ops-ding", "hi")
    assert not delivery.ok and delivery.detail == "DingTalk error 310000: sign not match"


# --- Generic webhook ----------------------------------------------------------------------


def verify_signature(secret: str, body: bytes, header: str) -> bool:
    """The receiver-side check documented in docs/notify.md."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def test_webhook_posts_channel_content_sent_at_and_signs_the_raw_body(notify, receiver):
    receiver.default = (204, b"", 0)
    notify.add("audit-hook", "webhook", receiver.url("/in"), secret="whsec-123456")
    delivery = notify.send("audit-hook", "quarterly report is ready ✅")
    assert delivery.ok and delivery.detail == "webhook accepted (HTTP 204)"
    [request] = receiver.requests
    body = request.json
    assert set(body) == {"channel", "content", "sent_at"}
    assert body["channel"] == "audit-hook"
    assert body["content"] == "quarterly report is ready ✅"
    sent_at = datetime.fromisoformat(body["sent_at"].replace("Z", "+00:00"))
    assert abs(datetime.now(UTC) - sent_at) < timedelta(seconds=10)
    header = request.headers["x-oryxos-signature"]
    assert header == "sha256=" + hmac.new(b"whsec-123456", request.body, hashlib.sha256).hexdigest()
    assert verify_signature("whsec-123456", request.body, header)
    assert not verify_signature("another-secret", request.body, header)


def test_webhook_without_secret_has_no_signature_and_4xx_fails_without_retry(notify, receiver):
    receiver.reply(404, {"error": "no such hook"})
    notify.add("audit-hook", "webhook", receiver.url())
    delivery = notify.send("audit-hook", "hi")
    assert "x-oryxos-signature" not in receiver.requests[0].headers
    assert not delivery.ok and not delivery.retryable and delivery.status_code == 404
    assert delivery.detail == 'the webhook answered HTTP 404: {"error": "no such hook"}'
    assert len(receiver.requests) == 1


# --- Retries: one more attempt on 5xx, timeout, no connection -----------------------------


def test_a_5xx_is_retried_once_and_can_then_succeed(notify, receiver):
    receiver.reply(502, {"msg": "bad gateway"})
    receiver.reply(200, ERRCODE_OK)
    notify.add("ops-wecom", "wecom", receiver.url())
    delivery = notify.send("ops-wecom", "hi")
    assert delivery.ok and delivery.attempts == 2
    assert len(receiver.requests) == 2


def test_two_5xx_fail_after_two_attempts(notify, receiver):
    receiver.default = (500, {"msg": "internal error"}, 0)
    notify.add("team-lark", "feishu", receiver.url())
    delivery = notify.send("team-lark", "hi")
    assert not delivery.ok and delivery.retryable and delivery.attempts == 2
    assert delivery.status_code == 500
    assert delivery.detail == 'HTTP 500 from 127.0.0.1: {"msg": "internal error"}'
    assert len(receiver.requests) == 2


def test_a_slow_vendor_times_out_and_is_retried_once(oryxos_runtime, receiver):
    oryxos_runtime.config.notify.timeout_seconds = 0.3
    receiver.default = (200, FEISHU_OK, 1.0)
    oryxos_runtime.notify.add("team-lark", "feishu", receiver.url())
    started = time.monotonic()
    delivery = oryxos_runtime.notify.send("team-lark", "hi")
    elapsed = time.monotonic() - started
    assert not delivery.ok and delivery.retryable and delivery.attempts == 2
    assert delivery.detail == "no reply from 127.0.0.1 within 0.3 s"
    assert elapsed < 1.5
    assert len(receiver.requests) == 2


def test_retries_follow_the_config(oryxos_runtime, receiver):
    oryxos_runtime.config.notify.retries = 0
    receiver.default = (503, {"msg": "down"}, 0)
    oryxos_runtime.notify.add("ops-wecom", "wecom", receiver.url())
    assert oryxos_runtime.notify.send("ops-wecom", "hi").attempts == 1
    assert len(receiver.requests) == 1


def test_a_refused_connection_is_reported_and_retried(notify, receiver):
    url = receiver.url()
    receiver.close()  # nothing listens there any more
    notify.add("ops-wecom", "wecom", url)
    delivery = notify.send("ops-wecom", "hi")
    assert not delivery.ok and delivery.retryable and delivery.attempts == 2
    assert delivery.detail.startswith("cannot reach 127.0.0.1:")


def test_the_verification_snippet_in_the_docs_accepts_a_real_delivery(notify, receiver):
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs/notify.md").read_text()
    snippet = next(
        block.split("\n", 1)[1]
        for block in docs.split("```")
        if block.startswith("python\n") and "def verify(" in block
    )
    namespace: dict = {}
    exec(compile(snippet, "docs/notify.md", "exec"), namespace)
    verify = namespace["verify"]

    receiver.default = (200, b"", 0)
    notify.add("audit-hook", "webhook", receiver.url(), secret="whsec-docs-1")
    assert notify.send("audit-hook", "signed").ok
    request = receiver.requests[0]
    header = request.headers["x-oryxos-signature"]
    assert verify("whsec-docs-1", request.body, header)["content"] == "signed"
    with pytest.raises(ValueError, match="bad signature"):
        verify("whsec-wrong", request.body, header)
    with pytest.raises(ValueError, match="bad signature"):
        verify("whsec-docs-1", request.body.replace(b"signed", b"forged"), header)


# --- Splitting and Markdown detection -----------------------------------------------------


def test_split_utf8_keeps_every_character_and_every_limit():
    import random

    from oryxos_notify.adapters import split_utf8

    rng = random.Random(7)
    alphabet = "abc xyz 中文字符 ✅🙂\n"
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 400)))
        text = "x" + text  # never only white space
        limit = rng.randrange(4, 64)
        parts = split_utf8(text, limit)
        assert all(len(p.encode()) <= limit for p in parts)
        assert "".join(parts).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace(
            "\n", ""
        )


@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        ("plain words, 3 * 4 = 12", False),
        ("price: 5-10 dollars", False),
        ("# Title", True),
        ("intro\n- item", True),
        ("see **this**", True),
        ("a [link](https://x.example)", True),
        ("> quoted", True),
        ("```\ncode\n```", True),
        ("1. first", True),
    ],
)
def test_markdown_detection(text, markdown):
    from oryxos_notify.adapters import looks_like_markdown

    assert looks_like_markdown(text) is markdown
