"""A local webhook receiver for the offline demo (standard library only).

    python offline/webhook_receiver.py --port 8702

Accepts POST /hook (OryxOS's generic ``webhook`` notify channel: JSON ``{"channel", "content",
"sent_at"}``), prints each message and appends it to received.jsonl, and answers 200.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            message = json.loads(body)
        except json.JSONDecodeError:
            self.answer(400, {"error": "expected JSON"})
            return
        with Path("received.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(message, ensure_ascii=False) + "\n")
        print(f"--- {message.get('channel')} at {message.get('sent_at')}", flush=True)
        print(message.get("content"), flush=True)
        self.answer(200, {"ok": True})

    def answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description="A local webhook receiver.")
    parser.add_argument("--port", type=int, default=8702)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"webhook receiver: http://127.0.0.1:{args.port}/hook", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
