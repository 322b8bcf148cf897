"""One guarded HTTP exchange: whitelist and address checks on every hop, caps, timeouts.

httpx is used with ``follow_redirects=False``; :func:`fetch` follows redirects itself so that
each hop's URL passes ``runtime.sandbox.check_url`` and each hop's host, once resolved, passes
``runtime.sandbox.check_address`` (no link-local / cloud-metadata address, even behind a
whitelisted name, unless ``sandbox.http.allow_link_local``). Bodies are streamed and reading
stops at the cap, so a huge response costs at most the cap in memory.

The connection goes to the address that was checked (see :func:`_pinned`), so a DNS answer
that changes in between cannot send it elsewhere. Environment proxies are ignored
(``trust_env=False``) for the same reason.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oryxos.errors import OryxError

if TYPE_CHECKING:
    from oryxos.runtime import Runtime

#: Response types read as text; anything else is reported as binary.
TEXT_TYPES = ("text/", "json", "xml", "javascript", "x-www-form-urlencoded", "yaml", "csv")
#: Headers not carried to another origin on redirect (as browsers, requests and httpx do).
CREDENTIAL_HEADERS = ("authorization", "cookie", "proxy-authorization")
CHUNK = 64 * 1024


class HttpToolError(OryxError):
    """A request could not be made or completed (not a non-2xx answer, which is a result)."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.retryable = retryable


class BodyTooLarge(HttpToolError):
    """A sink refused more bytes (download_file over its cap)."""


@dataclass
class Fetched:
    """What came back from the last hop."""

    status: int
    reason: str
    url: str
    headers: dict[str, str]
    body: bytes = b""
    size: int = 0  # bytes received (all of them, also those a sink consumed)
    truncated: bool = False
    redirects: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")

    @property
    def is_text(self) -> bool:
        ctype = self.content_type.lower()
        if not ctype:
            return _looks_like_text(self.body)
        return any(marker in ctype for marker in TEXT_TYPES)

    def text(self) -> str:
        """The body decoded with the declared charset (UTF-8 if none or unknown)."""
        charset = "utf-8"
        for part in self.content_type.split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip("\"' ")
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def _looks_like_text(data: bytes) -> bool:
    sample = data[:2048]
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start > len(sample) - 4  # a character cut at the sample's end
    return True


@dataclass(frozen=True)
class Hop:
    """One checked request target: the URL as named, and the address it must connect to."""

    url: str
    host: str
    address: str | None  # None when the URL names an IP address itself


def resolve(host: str, port: int, timeout: float) -> list[Any]:
    """``getaddrinfo`` that gives up after ``timeout`` seconds (HttpToolError, retryable).

    The system resolver has no timeout of ours (glibc retries each name server for up to
    ~30 s), so the look-up runs in a daemon thread and the call waits for it at most the
    request timeout. A look-up that is given up on finishes in the background and is dropped;
    being a daemon thread it never holds up the process's exit.
    """
    outcome: list[Any] = []
    done = threading.Event()

    def look_up() -> None:
        try:
            outcome.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except (OSError, UnicodeError) as err:
            outcome.append(err)
        finally:
            done.set()

    threading.Thread(target=look_up, name="oryxos-dns", daemon=True).start()
    if not done.wait(timeout):
        raise HttpToolError(
            f"cannot resolve host {host!r}: no answer from the DNS resolver within {timeout:g} s",
            retryable=True,
        )
    if isinstance(outcome[0], BaseException):
        raise HttpToolError(f"cannot resolve host {host!r}: {outcome[0]}", retryable=True)
    return outcome[0]


def check_hop(runtime: Runtime, url: str) -> Hop:
    """Refuse ``url`` unless the sandbox allows it (http(s), whitelisted host) and every
    address its host resolves to is allowed. Raises SandboxViolation or HttpToolError."""
    sandbox = runtime.sandbox
    checked = sandbox.check_url(url)
    if checked.is_ip:  # check_url has checked the address itself
        return Hop(checked.url, checked.host, None)
    port = checked.port or (443 if checked.scheme == "https" else 80)
    infos = resolve(checked.host, port, runtime.config.http_tools.timeout_seconds)
    for info in infos:
        sandbox.check_address(info[4][0])
    return Hop(checked.url, checked.host, str(infos[0][4][0]))


def _pinned(hop: Hop) -> tuple[str, dict[str, str], dict[str, Any]]:
    """``(url, headers, extensions)`` that connect to the checked address, not to whatever
    the name resolves to a moment later (DNS rebinding): the URL names the IP, the Host header
    and the TLS server name (SNI, also used to verify the certificate) name the host."""
    import httpx

    if hop.address is None:
        return hop.url, {}, {}
    parsed = httpx.URL(hop.url)
    pinned = str(parsed.copy_with(host=hop.address))
    extensions = {"sni_hostname": hop.host} if parsed.scheme == "https" else {}
    return pinned, {"host": parsed.netloc.decode("ascii")}, extensions


def fetch(
    runtime: Runtime,
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    max_bytes: int | None = None,
    sink: Callable[[bytes], None] | None = None,
    before_body: Callable[[Fetched], None] | None = None,
) -> Fetched:
    """Send the request, following redirects through the checks; read the body up to the cap.

    :param sink: if given, receives the final body chunk by chunk instead of it being kept
        (``Fetched.body`` stays empty); it may raise BodyTooLarge to stop.
    :param before_body: called with the final response's status and headers before its body
        is read (download_file refuses a declared size over its cap there).
    """
    import httpx

    limits = runtime.config.http_tools
    cap = max_bytes if max_bytes is not None else limits.max_response_bytes
    # identity: a compressed body could expand far past the cap inside one decoded chunk
    send_headers = {"user-agent": limits.user_agent, "accept-encoding": "identity"}
    send_headers.update({k.lower(): v for k, v in (headers or {}).items()})
    redirects: list[str] = []
    method = method.upper()
    try:
        with httpx.Client(
            follow_redirects=False,
            timeout=limits.timeout_seconds,
            trust_env=False,
            # no connection reuse: a pooled TLS connection to an IP could carry a request
            # meant for another name on the same IP
            limits=httpx.Limits(max_keepalive_connections=0),
        ) as client:
            while True:
                hop = check_hop(runtime, url)
                url = hop.url
                target_url, pin_headers, extensions = _pinned(hop)
                request = client.build_request(
                    method,
                    target_url,
                    headers={**send_headers, **pin_headers},
                    content=content,
                    extensions=extensions,
                )
                response = client.send(request, stream=True)
                try:
                    target = _redirect_target(response, url)
                    if target is None:
                        fetched = Fetched(
                            status=response.status_code,
                            reason=response.reason_phrase,
                            url=url,
                            headers={k.lower(): v for k, v in response.headers.items()},
                            redirects=redirects,
                        )
                        if before_body is not None:
                            before_body(fetched)
                        _read_body(response, fetched, cap, sink)
                        return fetched
                finally:
                    response.close()
                if len(redirects) >= limits.max_redirects:
                    raise HttpToolError(f"more than {limits.max_redirects} redirects (last: {url})")
                status = response.status_code
                if status == 303 or (status in (301, 302) and method == "POST"):
                    method, content = "GET", None  # what browsers do
                    send_headers.pop("content-type", None)
                if _origin(target) != _origin(url):
                    for name in CREDENTIAL_HEADERS:
                        send_headers.pop(name, None)
                redirects.append(target)
                url = target
    except httpx.TimeoutException:
        raise HttpToolError(
            f"timed out after {limits.timeout_seconds:g} s ({url})", retryable=True
        ) from None
    except httpx.HTTPError as err:
        raise HttpToolError(
            f"request to {url} failed: {type(err).__name__}: {err}", retryable=True
        ) from None


def _redirect_target(response: Any, url: str) -> str | None:
    """The absolute URL a 3xx response to ``url`` points to, or None if it is no redirect."""
    import httpx

    location = response.headers.get("location")
    if not (response.is_redirect and location):
        return None
    return str(httpx.URL(url).join(location))


def _origin(url: str) -> tuple[str, str]:
    import httpx

    parsed = httpx.URL(url)
    return parsed.scheme, parsed.netloc.decode("ascii", errors="replace")


def _read_body(
    response: Any, fetched: Fetched, cap: int, sink: Callable[[bytes], None] | None
) -> None:
    """Stream the body into ``fetched.body`` (or the sink), stopping at ``cap`` bytes."""
    parts: list[bytes] = []
    for chunk in response.iter_bytes(CHUNK):
        if sink is not None:
            fetched.size += len(chunk)
            sink(chunk)
            continue
        room = cap - fetched.size
        if len(chunk) > room:
            parts.append(chunk[:room])
            fetched.size += room
            fetched.truncated = True
            break
        parts.append(chunk)
        fetched.size += len(chunk)
    fetched.body = b"".join(parts)
