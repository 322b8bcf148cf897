"""The built-in notify adapters: Feishu/Lark, WeCom, DingTalk and a generic signed webhook.

Each adapter produces exactly the request its vendor documents (links in docs/notify.md) and
counts a delivery as done only on the vendor's own success code, not on HTTP 200 alone.
Content that looks like Markdown (headings, lists, bold, links, code fences) is sent in the
vendor's Markdown form; anything else as plain text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote_plus, urlsplit, urlunsplit

from oryxos.notify import Delivery
from oryxos.storage import NotifyChannelRecord
from oryxos_notify.http import Reply, http_failure, json_body, post

MARKDOWN_PATTERN = re.compile(
    r"^ {0,3}(?:#{1,6}\s|[-*+]\s|\d{1,3}\.\s|>|```)"  # heading, list item, quote, code fence
    r"|\*\*[^*\n]+\*\*"  # bold
    r"|\[[^\]\n]+\]\([^)\s]+\)",  # link
    re.MULTILINE,
)


def looks_like_markdown(text: str) -> bool:
    """Whether ``text`` uses Markdown that a vendor's Markdown message would render."""
    return bool(MARKDOWN_PATTERN.search(text))


def first_line_title(text: str, limit: int = 64) -> str:
    """A short title from the first non-empty line, without Markdown markers."""
    for line in text.splitlines():
        title = line.strip().lstrip("#>*-+ ").replace("**", "").strip()
        if title:
            return title if len(title) <= limit else title[: limit - 1] + "…"
    return "OryxOS"


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hashlib.sha256).digest()


def _cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_bytes`` UTF-8 bytes (whole characters)."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def split_utf8(text: str, limit: int) -> list[str]:
    """Cut ``text`` into parts of at most ``limit`` UTF-8 bytes, at line ends where possible.

    A line longer than ``limit`` is cut between characters. Parts that are only white space are
    dropped (vendors refuse empty messages).
    """
    parts: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line.encode("utf-8")) > limit:
            if current:
                parts.append(current)
                current = ""
            head = _cut_utf8(line, limit)
            parts.append(head)
            line = line[len(head) :]
        if len((current + line).encode("utf-8")) > limit:
            parts.append(current)
            current = ""
        current += line
    if current:
        parts.append(current)
    return [part for part in parts if part.strip()]


def fit_parts(text: str, limit: int, max_parts: int) -> tuple[list[str], str]:
    """Parts of at most ``limit`` bytes, at most ``max_parts`` of them, and a note saying what
    was done ("" when the text fits in one message)."""
    total = len(text.encode("utf-8"))
    parts = split_utf8(text, limit)
    if len(parts) <= 1:
        return parts, ""
    if len(parts) <= max_parts:
        return parts, (
            f"split into {len(parts)} messages: the content is {total} bytes and one message "
            f"holds at most {limit}"
        )
    kept = parts[:max_parts]
    marker = "\n[truncated by OryxOS]"
    kept[-1] = _cut_utf8(kept[-1], limit - len(marker.encode("utf-8"))) + marker
    sent = sum(len(part.encode("utf-8")) for part in kept) - len(marker.encode("utf-8"))
    return kept, (
        f"truncated: the content is {total} bytes, one message holds at most {limit} and at "
        f"most {max_parts} messages are sent, so {sent} bytes were sent"
    )


def _status(result: Reply | Delivery) -> int | None:
    return result.status if isinstance(result, Reply) else result.status_code


def vendor_verdict(
    result: Reply | Delivery, vendor: str, codes: tuple[str, ...], messages: tuple[str, ...]
) -> Delivery:
    """Success only when the reply's JSON carries the vendor's success code 0.

    ``codes`` / ``messages``: the keys that hold the result code and its message, first found
    wins (Feishu answers ``code``/``msg``, older Feishu bots ``StatusCode``/``StatusMessage``).
    """
    if isinstance(result, Delivery):
        return result
    body = result.json if isinstance(result.json, dict) else {}
    code_key = next((key for key in codes if key in body), None)
    if code_key is None:
        if 200 <= result.status < 300:
            return Delivery(
                False,
                f"{vendor} replied without a result code: {result.snippet()}",
                False,
                result.status,
            )
        return http_failure(result, vendor)
    code = body[code_key]
    if code == 0:
        return Delivery(True, f"{vendor} accepted the message", False, result.status)
    message = next((body[key] for key in messages if body.get(key)), "(no message)")
    return Delivery(False, f"{vendor} error {code}: {message}", False, result.status)


class FeishuAdapter:
    """Feishu / Lark custom bot (``/open-apis/bot/v2/hook/...``).

    Text as ``msg_type: text``; Markdown as an ``interactive`` card with one ``markdown``
    element. With a secret: ``timestamp`` (seconds, a string) and ``sign`` =
    base64(HMAC-SHA256(key = "timestamp\\nsecret", message = empty)) in the body.
    """

    vendor = "Feishu"

    @staticmethod
    def sign(timestamp: str, secret: str) -> str:
        key = f"{timestamp}\n{secret}".encode()
        return base64.b64encode(hmac_sha256(key, b"")).decode("ascii")

    def payload(self, content: str, secret: str | None, now: float | None = None) -> dict[str, Any]:
        payload: dict[str, Any] = {}
        if secret:
            timestamp = str(int(time.time() if now is None else now))
            payload = {"timestamp": timestamp, "sign": self.sign(timestamp, secret)}
        if looks_like_markdown(content):
            payload["msg_type"] = "interactive"
            payload["card"] = {"elements": [{"tag": "markdown", "content": content}]}
        else:
            payload["msg_type"] = "text"
            payload["content"] = {"text": content}
        return payload

    def deliver(
        self, channel: NotifyChannelRecord, content: str, *, secret: str | None, timeout: float
    ) -> Delivery:
        payload = self.payload(content, secret)
        result = post(channel.url, json_body(payload), timeout=timeout)
        verdict = vendor_verdict(
            result, self.vendor, ("code", "StatusCode"), ("msg", "StatusMessage")
        )
        if verdict.ok:
            kind = "card (Markdown)" if payload["msg_type"] == "interactive" else "text"
            return Delivery(True, f"Feishu accepted the {kind} message", False, _status(result))
        return verdict


class WeComAdapter:
    """WeCom (企业微信) group bot (``/cgi-bin/webhook/send?key=...``).

    ``msgtype`` text (content at most 2048 UTF-8 bytes) or markdown (at most 4096); longer
    content is split at line ends into several messages, at most :attr:`max_parts`, and cut
    beyond that — the delivery detail says which. WeCom group bots have no signing: a channel
    secret is not used.
    """

    vendor = "WeCom"
    text_limit = 2048
    markdown_limit = 4096
    max_parts = 5

    def messages(self, content: str) -> tuple[str, list[dict[str, Any]], str]:
        kind = "markdown" if looks_like_markdown(content) else "text"
        limit = self.markdown_limit if kind == "markdown" else self.text_limit
        parts, note = fit_parts(content, limit, self.max_parts)
        return kind, [{"msgtype": kind, kind: {"content": part}} for part in parts], note

    def deliver(
        self, channel: NotifyChannelRecord, content: str, *, secret: str | None, timeout: float
    ) -> Delivery:
        kind, payloads, note = self.messages(content)
        status = None
        for number, payload in enumerate(payloads, 1):
            result = post(channel.url, json_body(payload), timeout=timeout)
            verdict = vendor_verdict(result, self.vendor, ("errcode",), ("errmsg",))
            status = verdict.status_code
            if not verdict.ok:
                if number == 1:
                    return verdict
                # Earlier parts arrived: a retry of the whole would repeat them.
                return Delivery(
                    False,
                    f"message {number} of {len(payloads)} failed after {number - 1} were "
                    f"delivered: {verdict.detail}",
                    False,
                    status,
                )
        detail = f"WeCom accepted the {kind} message" + (f" ({note})" if note else "")
        return Delivery(True, detail, False, status)


class DingTalkAdapter:
    """DingTalk (钉钉) custom robot (``/robot/send?access_token=...``).

    ``msgtype`` text or markdown (with a ``title`` from the first line). With a secret (加签):
    query parameters ``timestamp`` (milliseconds) and ``sign`` =
    urlencode(base64(HMAC-SHA256(key = secret, message = "timestamp\\nsecret"))).
    """

    vendor = "DingTalk"

    @staticmethod
    def sign(timestamp: str, secret: str) -> str:
        """The base64 signature (before URL encoding)."""
        digest = hmac_sha256(secret.encode(), f"{timestamp}\n{secret}".encode())
        return base64.b64encode(digest).decode("ascii")

    def signed_url(self, url: str, secret: str | None, now: float | None = None) -> str:
        if not secret:
            return url
        timestamp = str(int((time.time() if now is None else now) * 1000))
        extra = f"timestamp={timestamp}&sign={quote_plus(self.sign(timestamp, secret))}"
        parts = urlsplit(url)
        query = f"{parts.query}&{extra}" if parts.query else extra
        return urlunsplit(parts._replace(query=query))

    @staticmethod
    def payload(content: str) -> dict[str, Any]:
        if looks_like_markdown(content):
            return {
                "msgtype": "markdown",
                "markdown": {"title": first_line_title(content), "text": content},
            }
        return {"msgtype": "text", "text": {"content": content}}

    def deliver(
        self, channel: NotifyChannelRecord, content: str, *, secret: str | None, timeout: float
    ) -> Delivery:
        payload = self.payload(content)
        result = post(self.signed_url(channel.url, secret), json_body(payload), timeout=timeout)
        verdict = vendor_verdict(result, self.vendor, ("errcode",), ("errmsg",))
        if verdict.ok:
            detail = f"DingTalk accepted the {payload['msgtype']} message"
            return Delivery(True, detail, False, verdict.status_code)
        return verdict


class WebhookAdapter:
    """A generic JSON webhook: POST ``{"channel", "content", "sent_at"}``; any 2xx is success.

    With a secret, header ``X-OryxOS-Signature: sha256=<hex HMAC-SHA256 of the raw body>``
    (key = the secret). ``sent_at`` is inside the signed body, so a receiver can refuse replays.
    """

    vendor = "webhook"
    signature_header = "X-OryxOS-Signature"

    @staticmethod
    def signature(body: bytes, secret: str) -> str:
        return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()

    @staticmethod
    def payload(channel: NotifyChannelRecord, content: str) -> dict[str, Any]:
        sent_at = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return {"channel": channel.name, "content": content, "sent_at": sent_at}

    def deliver(
        self, channel: NotifyChannelRecord, content: str, *, secret: str | None, timeout: float
    ) -> Delivery:
        body = json_body(self.payload(channel, content))
        headers = {self.signature_header: self.signature(body, secret)} if secret else {}
        result = post(channel.url, body, timeout=timeout, headers=headers)
        if isinstance(result, Delivery):
            return result
        if 200 <= result.status < 300:
            return Delivery(True, f"webhook accepted (HTTP {result.status})", False, result.status)
        return http_failure(result, "the webhook")


def builtin_adapters() -> dict[str, Any]:
    """Channel type → adapter, as the plugin registers them."""
    return {
        "feishu": FeishuAdapter(),
        "wecom": WeComAdapter(),
        "dingtalk": DingTalkAdapter(),
        "webhook": WebhookAdapter(),
    }
