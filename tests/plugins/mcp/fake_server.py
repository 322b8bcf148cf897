"""A tiny MCP stdio server (stdlib only) for the failure cases real servers do not show on demand.

Usage: python fake_server.py MODE [ARG]
  silent              read stdin forever, never answer anything
  exit                print to stderr and exit 3 at once
  slow SECONDS        sleep, then serve one tool "slow_echo" (for the parallel start test)
  hang-on-call        answer initialize and tools/list, never answer tools/call
  env NAME            serve one tool "show_env" returning the variable NAME
  log-on-call         serve one tool "chatty" that sends two log notifications before answering
"""

from __future__ import annotations

import json
import os
import sys
import time


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name: str) -> dict:
    return {"name": name, "description": f"fake {name}", "inputSchema": {"type": "object"}}


def serve(tool_name: str, answer_calls: bool, result=lambda args: "ok", before=None) -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue  # a notification
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {
                        "protocolVersion": msg["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "fake", "version": "0"},
                    },
                }
            )
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": [tool(tool_name)]}})
        elif method == "tools/call" and answer_calls:
            if before is not None:
                before()
            text = result(msg["params"].get("arguments") or {})
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {"content": [{"type": "text", "text": text}], "isError": False},
                }
            )
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {}})


def main() -> None:
    mode = sys.argv[1]
    if mode == "silent":
        for _ in sys.stdin:
            pass
        time.sleep(3600)
    elif mode == "exit":
        sys.stderr.write("fake server: giving up at start\n")
        sys.exit(3)
    elif mode == "slow":
        time.sleep(float(sys.argv[2]))
        serve("slow_echo_" + str(os.getpid()), True)
    elif mode == "hang-on-call":
        serve("hang", False)
    elif mode == "env":
        name = sys.argv[2]
        serve("show_env", True, lambda args: os.environ.get(name, "<unset>"))
    elif mode == "log-on-call":

        def log_twice() -> None:
            for level, data in (("info", "warming up"), ("error", {"disk": "full"})):
                send(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": level, "logger": "fake", "data": data},
                    }
                )

        serve("chatty", True, before=log_twice)


if __name__ == "__main__":
    main()
