"""A receiver on 127.0.0.1 that plays a vendor: it records every request and answers with the
replies a test queues (status, JSON body, delay). Started and stopped by each test."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Received:
    method: str
    path: str
    raw_query: str
    headers: dict[str, str]
    body: bytes

    @property
    def query(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(self.raw_query).items()}

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.replies: deque[tuple[int, Any, float]] = deque()
        self.default: tuple[int, Any, float] = (200, {"code": 0, "msg": "success"}, 0.0)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                parts = urlsplit(self.path)
                receiver.requests.append(
                    Received(
                        "POST",
                        parts.path,
                        parts.query,
                        {k.lower(): v for k, v in self.headers.items()},
                        self.rfile.read(length),
                    )
                )
                status, body, delay = (
                    receiver.replies.popleft() if receiver.replies else receiver.default
                )
                if delay:
                    time.sleep(delay)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout tests)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = False
        self.server.block_on_close = True  # close() waits for slow handlers
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str = "/hook", query: str = "") -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}{path}" + (f"?{query}" if query else "")

    def reply(self, status: int = 200, body: Any = None, delay: float = 0.0) -> None:
        self.replies.append((status, body if body is not None else self.default[1], delay))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def receiver() -> Receiver:
    server = Receiver()
    server.thread.start()
    yield server
    server.close()
