"""Overhead of an OryxOS turn over the bare litellm calls it makes.

Run by hand: ``python bench/turn_overhead.py [--turns 300] [--in-process]``. It times

(a) one ReAct turn with one tool call — two provider calls, one tool run, the prompt builder,
    the session load and save and three audit rows — and
(b) the same two requests (the very messages and tools the turn sent, read back from the
    server's request log) made directly with ``litellm.completion``, as litellm is used by
    default; and
(c) the same direct calls with litellm's post-call success logging skipped, as OryxOS makes
    them when no litellm callback is configured (see ``success_logging_skipped`` in
    plugins/oryxos_litellm/provider.py) — the strict baseline: only OryxOS's own work differs.

The model is the scripted model server, run as its own process (``python -m
oryxos.testing.model_server``) as a real provider is: in the benchmark's process its threads
would take the GIL from whatever side runs after a reply. ``--in-process`` runs it as a thread
instead, for comparison with earlier figures. The sides are interleaved so that machine noise
hits all alike, each starting after a short pause (so that litellm's background logging of
one side never runs inside the next); each turn uses a new session so that history does not
grow. Prints medians, both ratios (target ≤ 1.15) and the overhead per loop iteration.
Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

AGENT = """---
name: bench
description: Benchmark agent.
provider:
  name: default
tools: [echo]
---
You are a benchmark agent. Call echo once, then answer.
"""

SCRIPT = """\
steps:
  - when: {role: user}
    tool_calls: [{name: echo, arguments: {text: ping}}]
    repeat: true
fallback: {answer: done}
"""


#: Pause before each timed side, in seconds.
SETTLE = 0.02


class ServerProcess:
    """The scripted model server as a child process; request bodies come back via its log."""

    def __init__(self, folder: Path):
        (folder / "script.yaml").write_text(SCRIPT)
        self.log_path = folder / "requests.jsonl"
        self.log_path.touch()
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "oryxos.testing.model_server", "--port", "0"),
                *("--script", str(folder / "script.yaml"), "--log", str(self.log_path)),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline()  # "scripted model server: <url> (...)"
        if not line.startswith("scripted model server: "):
            self.proc.kill()
            raise SystemExit(f"the model server did not start: {line!r}")
        self.url = line.split()[3]
        self._log = self.log_path.open(encoding="utf-8")

    def new_requests(self) -> list[dict]:
        """Bodies logged since the last call (the server logs a request before answering it)."""
        return [json.loads(line) for line in self._log.readlines()]

    def close(self) -> None:
        self._log.close()
        self.proc.terminate()
        self.proc.wait(timeout=10)


class ServerThread:
    """The scripted model server in this process (``--in-process``)."""

    def __init__(self, folder: Path):
        from oryxos.testing import Reply, ScriptedModelServer

        def respond(body: dict) -> Reply:
            if body["messages"][-1]["role"] == "user":
                return Reply.tool("echo", {"text": "ping"})
            return Reply.answer("done")

        self.server = ScriptedModelServer(responder=respond).start()
        self.url = self.server.url
        self._seen = 0

    def new_requests(self) -> list[dict]:
        bodies = self.server.requests[self._seen :]
        self._seen = len(self.server.requests)
        return bodies

    def close(self) -> None:
        self.server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--in-process", action="store_true", help="the model server as a thread")
    args = parser.parse_args()

    from oryxos_litellm.provider import load_litellm, success_logging_skipped

    from oryxos.plugins import get_plugin_manager
    from oryxos.runtime import Runtime
    from oryxos.testing import inline_plugin, make_workspace, use_model_server

    def echo(text: str) -> str:
        """Repeat the text."""
        return text

    tools = inline_plugin(
        "benchtools", oryxos_register_tools=lambda catalog: catalog.register(echo)
    )
    litellm = load_litellm()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = ServerThread(folder) if args.in_process else ServerProcess(folder)
        workspace = make_workspace(folder / "ws")
        use_model_server(workspace, server)
        (workspace.agents_dir / "bench").mkdir()
        (workspace.agents_dir / "bench" / "AGENT.md").write_text(AGENT)
        runtime = Runtime.load(workspace, get_plugin_manager(plugins=[tools]))
        profile = runtime.agents.load("bench")
        loop = runtime.loop

        def turn(i: int) -> tuple[float, list[dict]]:
            server.new_requests()
            start = time.perf_counter()
            result = loop.run_turn(profile, "go", session_id=f"bench-{i}")
            elapsed = time.perf_counter() - start
            assert result.success and len(result.tool_calls) == 1, result
            sent = server.new_requests()
            assert len(sent) == 2, sent
            return elapsed, sent

        def direct(requests: list[dict], quiet: bool) -> float:
            start = time.perf_counter()
            for body in requests:
                with success_logging_skipped(litellm) if quiet else nullcontext():
                    reply = litellm.completion(
                        model="openai/" + body["model"],
                        messages=body["messages"],
                        tools=body.get("tools"),
                        api_base=server.url,
                        api_key="sk-scripted-test",
                        timeout=60,
                        num_retries=0,
                    )
                reply.choices[0].message  # noqa: B018 - what the loop reads
            return time.perf_counter() - start

        turns: list[float] = []
        plain: list[float] = []
        quiet: list[float] = []
        try:
            for i in range(-args.warmup, args.turns):
                # Each side starts after litellm's background logging of the previous side has
                # finished (it takes ~1 ms), so that no side pays for another's.
                time.sleep(SETTLE)
                elapsed, sent = turn(i)
                time.sleep(SETTLE)
                a = direct(sent, False)
                time.sleep(SETTLE)
                b = direct(sent, True)
                if i >= 0:
                    turns.append(elapsed * 1000)
                    plain.append(a * 1000)
                    quiet.append(b * 1000)
        finally:
            runtime.close()
            server.close()

    t, d, q = (statistics.median(x) for x in (turns, plain, quiet))
    where = "a thread of this process" if args.in_process else "its own process"
    print(f"python {sys.version.split()[0]}, {args.turns} turns after {args.warmup} warm-up")
    print(f"model server: {where}")
    print(f"turn with one tool call (2 provider calls): median {t:.2f} ms, best {min(turns):.2f}")
    print(f"same 2 calls, litellm as by default:        median {d:.2f} ms, best {min(plain):.2f}")
    print(f"same 2 calls, litellm's logging skipped:    median {q:.2f} ms, best {min(quiet):.2f}")
    print(f"ratio vs default litellm {t / d:.3f}; vs logging skipped {t / q:.3f} (target <= 1.15)")
    print(f"overhead per iteration: {(t - d) / 2:.2f} ms; strict {(t - q) / 2:.2f} ms")


if __name__ == "__main__":
    main()
