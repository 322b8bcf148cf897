"""A local web server for the HTTP tool tests (127.0.0.1 only): pages, redirects, a 50 MB
stream, and fakes of the SearXNG and Brave Search JSON APIs."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ARTICLE_TEXT = (
    "The Arabian oryx is a medium-sized antelope with a distinct shoulder bump, long straight "
    "horns and a tufted tail. It was extinct in the wild by the early 1970s."
)
ARTICLE = f"""<!doctype html>
<html><head><title>Oryx facts | Desert News</title><meta charset="utf-8"></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/sport">Sport</a></li>
<li><a href="/weather">Weather</a></li><li><a href="/login">Log in</a></li></ul></nav></header>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies.</div>
<aside class="sidebar"><h3>Trending</h3><ul><li><a href="/a">Celebrity gossip roundup</a></li>
<li><a href="/b">Ten best sandwiches</a></li></ul><p>Subscribe to our newsletter!</p></aside>
<main><article><h1>The Oryx of Arabia</h1>
<p>{ARTICLE_TEXT}</p>
<p>It was saved in zoos and private preserves, and reintroduced into the wild starting in
1980. In 1986 it was classified as endangered on the IUCN Red List.</p>
<h2>Habitat</h2>
<p>The oryx lives in desert and steppe areas, where it can detect rainfall far away and move
towards it, eating the fresh plants that grow after rain.</p>
</article></main>
<footer><p>Copyright 2026 Desert News Corp. All rights reserved.</p>
<a href="/privacy">Privacy policy</a> <a href="/terms">Terms of use</a></footer>
</body></html>"""

SEARXNG_RESULTS = {
    "query": "oryx",
    "number_of_results": 2,
    "results": [
        {
            "url": "http://127.0.0.1/oryx",
            "title": "Arabian oryx",
            "content": "The Arabian oryx is a <b>medium-sized</b> antelope &amp; more.",
            "engine": "wikipedia",
            "engines": ["wikipedia"],
            "positions": [1],
            "score": 1.0,
            "category": "general",
            "parsed_url": ["http", "127.0.0.1", "/oryx", "", "", ""],
        },
        {
            "url": "https://elsewhere.example/oryx",
            "title": "Oryx - elsewhere",
            "content": "Another page about the oryx.",
            "engine": "duckduckgo",
            "engines": ["duckduckgo"],
            "positions": [2],
            "score": 0.5,
            "category": "general",
        },
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": [],
    "unresponsive_engines": [],
}

BRAVE_RESULTS = {
    "type": "search",
    "query": {"original": "oryx", "more_results_available": True},
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "family_friendly": True,
        "results": [
            {
                "type": "search_result",
                "title": "Arabian <strong>oryx</strong> - Wikipedia",
                "url": "http://127.0.0.1/wiki/oryx",
                "is_source_local": False,
                "description": "The Arabian <strong>oryx</strong> is an antelope.",
                "profile": {"name": "Wikipedia"},
                "language": "en",
            },
            {
                "type": "search_result",
                "title": "Oryx conservation",
                "url": "https://other.example/conservation",
                "description": "Saving the <strong>oryx</strong>.",
            },
            {
                "type": "search_result",
                "title": "Third",
                "url": "http://127.0.0.1/third",
                "description": "Third result.",
            },
        ],
    },
}
BRAVE_TOKEN = "brave-test-token-123"
BIG_BYTES = 50 * 1024 * 1024


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: FakeWeb

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, data: object, status: int = 200) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        self.server.requests.append((self.command, self.path, headers, body))
        path = parts.path
        port = self.server.server_address[1]
        if path == "/echo":
            self._json(
                {
                    "method": self.command,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": body.decode("utf-8", "replace"),
                }
            )
        elif path == "/json":
            self._json({"items": [1, 2, 3]})
        elif path == "/missing":
            self._send(404, b"no such thing", "text/plain; charset=utf-8")
        elif path == "/teapot":
            self._json({"error": "I am a teapot"}, status=418)
        elif path == "/redirect":
            self._send(302, b"", "text/plain", {"Location": "/json"})
        elif path == "/redirect-chain":
            n = int(query.get("n", ["0"])[0])
            target = f"/redirect-chain?n={n - 1}" if n > 1 else "/json"
            self._send(302, b"", "text/plain", {"Location": target})
        elif path == "/redirect-loop":
            self._send(302, b"", "text/plain", {"Location": "/redirect-loop"})
        elif path == "/redirect-away":  # same server, but a name that is not whitelisted
            self._send(301, b"", "text/plain", {"Location": f"http://localhost:{port}/json"})
        elif path == "/redirect-metadata":
            target = "http://169.254.169.254/latest/meta-data/"
            self._send(302, b"", "text/plain", {"Location": target})
        elif path == "/see-other":
            self._send(303, b"", "text/plain", {"Location": "/echo"})
        elif path == "/redirect-307":
            self._send(307, b"", "text/plain", {"Location": "/echo"})
        elif path == "/article":
            self._send(200, ARTICLE.encode(), "text/html; charset=utf-8")
        elif path == "/latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif path == "/binary":
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "image/png")
        elif path == "/small-file":
            self._send(200, b"hello download\n", "text/plain")
        elif path == "/big":
            self._stream_big(declare=query.get("declare") == ["1"])
        elif path == "/slow":
            time.sleep(float(query.get("s", ["3"])[0]))
            self._json({"late": True})
        elif path == "/searxng/search":
            if query.get("format") != ["json"]:
                self._send(403, b"format not allowed", "text/plain")
            else:
                self._json({**SEARXNG_RESULTS, "query": query.get("q", [""])[0]})
        elif path == "/brave/res/v1/web/search":
            if self.headers.get("X-Subscription-Token") != BRAVE_TOKEN:
                self._json({"type": "ErrorResponse", "error": {"code": "UNAUTHORIZED"}}, 401)
                return
            count = int(query.get("count", ["20"])[0])
            web = {**BRAVE_RESULTS["web"], "results": BRAVE_RESULTS["web"]["results"][:count]}
            self._json({**BRAVE_RESULTS, "web": web})
        else:
            self._send(404, b"not found", "text/plain")

    def _stream_big(self, *, declare: bool) -> None:
        """50 MB, generated chunk by chunk (never held in memory), chunked or declared."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if declare:
            self.send_header("Content-Length", str(BIG_BYTES))
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = b"x" * (256 * 1024)
        sent = 0
        try:
            while sent < BIG_BYTES:
                if declare:
                    self.wfile.write(chunk)
                else:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
            if not declare:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            self.server.big_sent.append(sent)
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class FakeWeb(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, str, dict, bytes]] = []
        self.big_sent: list[int] = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def wait_big_sent(self, count: int, timeout: float = 20.0) -> int:
        """Bytes the ``count``-th /big stream sent, once its handler has finished."""
        deadline = time.monotonic() + timeout
        while len(self.big_sent) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.big_sent[count - 1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> FakeWeb:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
