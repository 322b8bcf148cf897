"""One JSON POST with a timeout, turned into a reply or a failed :class:`Delivery`.

httpx is imported on first use only. The TLS context (the costly part of a new client: loading
the CA bundle) is built once per process; a client is cheap after that and is closed after each
request, so nothing stays open between deliveries. Redirects are not followed: a webhook that
redirects is misconfigured, and following it would send the message somewhere nobody chose.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from oryxos import __version__
from oryxos.notify import Delivery

USER_AGENT = f"oryxos/{__version__} (notify)"
SNIPPET_CHARS = 300

_ssl_context: Any = None
_ssl_lock = threading.Lock()


def _tls() -> Any:
    global _ssl_context
    with _ssl_lock:
        if _ssl_context is None:
            import httpx

            _ssl_context = httpx.create_ssl_context()
        return _ssl_context


@dataclass(frozen=True)
class Reply:
    """An HTTP reply: status, body text and the body as JSON (None if it is not JSON)."""

    status: int
    text: str
    json: Any

    def snippet(self) -> str:
        text = " ".join(self.text.split())
        return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "…"


def json_body(payload: Any) -> bytes:
    """The exact bytes sent (UTF-8, compact): what a signature over the body covers."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def post(
    url: str, body: bytes, *, timeout: float, headers: dict[str, str] | None = None
) -> Reply | Delivery:
    """POST ``body`` as JSON; a Reply, or a failed Delivery when no reply came.

    A timeout and a refused or broken connection are retryable; so is any HTTP 5xx reply
    (returned as a failed Delivery here, since no vendor answers 5xx with a usable verdict).
    """
    import httpx

    host = urlsplit(url).hostname or "?"
    all_headers = {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": USER_AGENT,
        **(headers or {}),
    }
    try:
        with httpx.Client(verify=_tls(), timeout=timeout, follow_redirects=False) as client:
            response = client.post(url, content=body, headers=all_headers)
    except httpx.TimeoutException:
        return Delivery(False, f"no reply from {host} within {timeout:g} s", retryable=True)
    except httpx.TransportError as err:
        return Delivery(False, f"cannot reach {host}: {err}", retryable=True)
    try:
        parsed = response.json()
    except ValueError:
        parsed = None
    reply = Reply(response.status_code, response.text, parsed)
    if reply.status >= 500:
        return Delivery(
            False, f"HTTP {reply.status} from {host}: {reply.snippet()}", True, reply.status
        )
    return reply


def http_failure(reply: Reply, vendor: str) -> Delivery:
    """A non-2xx reply without a vendor verdict, as a non-retryable failure."""
    return Delivery(
        False, f"{vendor} answered HTTP {reply.status}: {reply.snippet()}", False, reply.status
    )
