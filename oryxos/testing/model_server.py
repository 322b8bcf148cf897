"""Run the scripted model server as a process, from a YAML script.

    python -m oryxos.testing.model_server --script script.yaml --port 8700 [--log requests.jsonl]

It prints one line, ``scripted model server: http://127.0.0.1:8700/v1 ...``, then serves until
it is stopped (Ctrl-C or SIGTERM). Point a provider at it with ``api_base:
http://127.0.0.1:8700/v1`` and ``model: openai/<any name>``. The script format: docs/testing.md.
(A module of its own, so that ``python -m`` does not import it twice through the package.)
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from oryxos.testing.server import Script, ScriptedModelServer, ScriptError


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m oryxos.testing.model_server --script FILE [--port N] [--log FILE]``."""
    parser = argparse.ArgumentParser(
        prog="python -m oryxos.testing.model_server",
        description="A scripted OpenAI-compatible chat-completions server on 127.0.0.1.",
    )
    parser.add_argument("--script", required=True, help="the YAML script (docs/testing.md)")
    parser.add_argument("--port", type=int, default=8700, help="0 picks a free port (default 8700)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--log", help="append every request body to this file (JSON lines)")
    args = parser.parse_args(argv)
    try:
        script = Script.load(args.script)
    except ScriptError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115
    server = ScriptedModelServer(responder=script.respond, log=log)
    try:
        server.start(host=args.host, port=args.port)
    except OSError as err:
        print(f"error: cannot listen on {args.host}:{args.port}: {err.strerror}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"scripted model server: {server.url} ({len(script.steps)} steps from {args.script})")
    sys.stdout.flush()
    try:
        threading.Event().wait()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
