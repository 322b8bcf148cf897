"""http_get, http_post, http_request, fetch_webpage and download_file.

Sandbox rule of every tool here: the URL's host must be in ``sandbox.http.allowed_domains``
(``*.`` wildcards) — checked by the executor before the call (``sandbox_args``) and again by
the tool on every redirect hop — and every address the host resolves to must not be
link-local or a cloud-metadata address. download_file's ``path`` must also pass the file
whitelist for writing. A non-2xx answer is a result (status line first), not an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from oryxos.errors import OryxError
from oryxos.tools import Tool, ToolResult
from oryxos_http.client import BodyTooLarge, Fetched, HttpToolError, fetch

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
FORBIDDEN_HEADERS = ("host", "content-length", "transfer-encoding", "connection")

URL = {"type": "string", "description": "http(s) URL"}
HEADERS = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "description": "request headers",
}
BODY = {"type": "string", "description": "text body"}
JSON_BODY = {"description": "JSON body (sent as application/json)"}
INCLUDE_HEADERS = {
    "type": "boolean",
    "default": False,
    "description": "show all response headers",
}


def _runtime(ctx: Any) -> Any:
    runtime = getattr(ctx, "runtime", None)
    if runtime is None:
        raise HttpToolError("this tool needs a runtime in its ToolContext")
    return runtime


def _failure(err: OryxError) -> ToolResult:
    """A sandbox refusal or a failed exchange as the model sees it."""
    return ToolResult.fail(str(err), retryable=getattr(err, "retryable", False))


class _HttpTool(Tool):
    """What the three plain HTTP tools share: body building and the status-first output."""

    sandbox_args = {"url": "http"}  # noqa: RUF012
    fixed_method: str | None = None

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        method = (self.fixed_method or str(input.get("method", "GET"))).upper()
        if method not in METHODS:
            return ToolResult.fail(f"method: expected one of {', '.join(METHODS)}", retryable=True)
        try:
            headers, content = _request_parts(input)
            fetched = fetch(
                _runtime(ctx), method, str(input["url"]), headers=headers, content=content
            )
        except OryxError as err:
            return _failure(err)
        return ToolResult.ok(describe(fetched, include_headers=bool(input.get("include_headers"))))


def _request_parts(input: dict[str, Any]) -> tuple[dict[str, str], bytes | None]:
    headers = {str(k): str(v) for k, v in (input.get("headers") or {}).items()}
    for name in headers:
        if name.lower() in FORBIDDEN_HEADERS:
            raise HttpToolError(f"headers: {name!r} may not be set by a tool call", retryable=True)
    has_body, has_json = input.get("body") is not None, "json" in input
    if has_body and has_json:
        raise HttpToolError("give either body or json, not both", retryable=True)
    if has_json:
        if not any(k.lower() == "content-type" for k in headers):
            headers["content-type"] = "application/json"
        return headers, json.dumps(input["json"], ensure_ascii=False).encode("utf-8")
    if has_body:
        return headers, str(input["body"]).encode("utf-8")
    return headers, None


def describe(fetched: Fetched, *, include_headers: bool = False) -> str:
    """Status line, where the answer came from, the main headers, then the body."""
    lines = [f"HTTP {fetched.status} {fetched.reason}".rstrip()]
    if fetched.redirects:
        hops = len(fetched.redirects)
        lines.append(f"Final URL (after {hops} redirect{'s' if hops > 1 else ''}): {fetched.url}")
    shown = (
        fetched.headers
        if include_headers
        else {
            k: v
            for k, v in fetched.headers.items()
            if k in ("content-type", "location", "retry-after")
        }
    )
    lines += [f"{k}: {v}" for k, v in shown.items()]
    lines.append("")
    if not fetched.body:
        lines.append("(empty body)")
    elif fetched.is_text:
        lines.append(fetched.text())
    else:
        kind = fetched.content_type or "unknown type"
        lines.append(f"[binary body: {fetched.size} bytes of {kind}; use download_file to save it]")
    if fetched.truncated:
        lines.append(f"[body cut at {fetched.size} bytes (http_tools.max_response_bytes)]")
    return "\n".join(lines)


class HttpGetTool(_HttpTool):
    name = "http_get"
    description = "HTTP GET a URL; returns status, headers and body."
    fixed_method = "GET"
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {"url": URL, "headers": HEADERS, "include_headers": INCLUDE_HEADERS},
        "required": ["url"],
        "additionalProperties": False,
    }


class HttpPostTool(_HttpTool):
    name = "http_post"
    description = "HTTP POST a text or JSON body; returns status, headers and body."
    fixed_method = "POST"
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "url": URL,
            "body": BODY,
            "json": JSON_BODY,
            "headers": HEADERS,
            "include_headers": INCLUDE_HEADERS,
        },
        "required": ["url"],
        "additionalProperties": False,
    }


class HttpRequestTool(_HttpTool):
    name = "http_request"
    description = "HTTP request with any method; returns status, headers and body."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "method": {"type": "string", "enum": list(METHODS)},
            "url": URL,
            "body": BODY,
            "json": JSON_BODY,
            "headers": HEADERS,
            "include_headers": INCLUDE_HEADERS,
        },
        "required": ["method", "url"],
        "additionalProperties": False,
    }


class FetchWebpageTool(Tool):
    """Fetch a page and extract its readable main text with trafilatura.

    trafilatura (not regexes, not a whole-page html2text dump) finds the article and drops
    navigation, sidebars, footers and cookie banners; it outputs Markdown or plain text and
    reads the title from the page's metadata.
    """

    name = "fetch_webpage"
    description = (
        "Fetch a web page's title and readable main text (no navigation or boilerplate), "
        "as Markdown or plain text."
    )
    sandbox_args = {"url": "http"}  # noqa: RUF012
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "url": URL,
            "format": {"type": "string", "enum": ["markdown", "text"], "default": "markdown"},
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        fmt = str(input.get("format") or "markdown")
        if fmt not in ("markdown", "text"):
            return ToolResult.fail("format: expected 'markdown' or 'text'", retryable=True)
        headers = {"accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"}
        try:
            fetched = fetch(_runtime(ctx), "GET", str(input["url"]), headers=headers)
        except OryxError as err:
            return _failure(err)
        head = [] if fetched.ok else [f"HTTP {fetched.status} {fetched.reason}".rstrip()]
        ctype = fetched.content_type.lower()
        if "html" not in ctype and fetched.is_text:
            return ToolResult.ok("\n".join([*head, f"URL: {fetched.url}", "", fetched.text()]))
        if "html" not in ctype and ctype:
            return ToolResult.fail(
                f"{fetched.url} is not a web page ({fetched.content_type}); "
                "use download_file to save it",
            )
        title, text = extract(fetched.text(), fetched.url, fmt)
        out = [*head]
        if title:
            out.append(f"Title: {title}")
        out += [f"URL: {fetched.url}", "", text or "(no readable text found)"]
        if fetched.truncated:
            out.append(f"[page cut at {fetched.size} bytes before extraction]")
        return ToolResult.ok("\n".join(out))


def extract(html: str, url: str, fmt: str) -> tuple[str | None, str]:
    """``(title, main text)`` of an HTML page; falls back to the whole page's text."""
    import trafilatura

    output = "markdown" if fmt == "markdown" else "txt"
    text = trafilatura.extract(
        html,
        url=url,
        output_format=output,
        include_links=fmt == "markdown",
        include_tables=True,
    )
    meta = trafilatura.extract_metadata(html, default_url=url)
    title = getattr(meta, "title", None) if meta is not None else None
    if not text:
        text = trafilatura.html2txt(html) or ""
    return title, text.strip()


class DownloadFileTool(Tool):
    """Download a URL to a file, atomically, refusing anything over the size cap."""

    name = "download_file"
    description = (
        "Download a URL to a local file, all or nothing (too large or non-2xx: nothing saved)."
    )
    sandbox_args = {"url": "http", "path": "file_write"}  # noqa: RUF012
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "url": URL,
            "path": {"type": "string", "description": "where to save it (file whitelist applies)"},
            "overwrite": {"type": "boolean", "default": False},
        },
        "required": ["url", "path"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        try:
            runtime = _runtime(ctx)
            target = Path(runtime.sandbox.check_path(str(input["path"]), write=True, ctx=ctx))
            return self._download(runtime, str(input["url"]), target, bool(input.get("overwrite")))
        except OryxError as err:
            return _failure(err)

    def _download(self, runtime: Any, url: str, target: Path, overwrite: bool) -> ToolResult:
        if target.is_dir():
            return ToolResult.fail(f"path: {target} is a directory", retryable=True)
        if target.exists() and not overwrite:
            return ToolResult.fail(
                f"path: {target} exists; pass overwrite=true to replace it", retryable=True
            )
        if not target.parent.is_dir():
            return ToolResult.fail(f"path: folder {target.parent} does not exist", retryable=True)
        cap = runtime.config.http_tools.max_download_bytes
        digest = hashlib.sha256()
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                written = 0

                def before_body(fetched: Fetched) -> None:
                    if not fetched.ok:  # an error page is not the file: do not read it
                        raise HttpToolError(
                            f"HTTP {fetched.status} {fetched.reason} from {fetched.url}; "
                            "nothing saved"
                        )
                    declared = fetched.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > cap:
                        raise BodyTooLarge(_too_large(url, cap, f"{int(declared)} bytes declared"))

                def sink(chunk: bytes) -> None:
                    nonlocal written
                    written += len(chunk)
                    if written > cap:
                        raise BodyTooLarge(_too_large(url, cap, "more than that was sent"))
                    digest.update(chunk)
                    handle.write(chunk)

                fetched = fetch(runtime, "GET", url, sink=sink, before_body=before_body)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
        kind = fetched.content_type or "unknown type"
        return ToolResult.ok(
            f"Saved {written} bytes ({kind}) from {fetched.url} to {target} "
            f"(sha256 {digest.hexdigest()})."
        )


def _too_large(url: str, cap: int, detail: str) -> str:
    return (
        f"{url}: larger than the download cap of {cap} bytes "
        f"(http_tools.max_download_bytes; {detail}); nothing saved"
    )
