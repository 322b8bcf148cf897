"""Overhead of an OryxOS turn over the bare litellm calls it makes.

Run by hand: ``python bench/turn_overhead.py [--turns 200]``. Against the scripted model server
on 127.0.0.1, it times (a) one ReAct turn with one tool call — two provider calls, one tool run,
the prompt builder, the session load/save and three audit rows — and (b) the same two requests
(the very messages and tools the turn sent) made directly with ``litellm.completion``. Turns and
direct pairs are interleaved so that machine noise hits both alike; each turn uses a new
session so that history does not grow. Prints medians, the ratio (target ≤ 1.15) and the
overhead per loop iteration. Results go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
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


def respond(body: dict):
    from oryxos.testing import Reply

    if body["messages"][-1]["role"] == "user":
        return Reply.tool("echo", {"text": "ping"})
    return Reply.answer("done")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()

    from oryxos_litellm.provider import load_litellm

    from oryxos.plugins import get_plugin_manager
    from oryxos.runtime import Runtime
    from oryxos.testing import ScriptedModelServer, inline_plugin, make_workspace, use_model_server

    def echo(text: str) -> str:
        """Repeat the text."""
        return text

    tools = inline_plugin(
        "benchtools", oryxos_register_tools=lambda catalog: catalog.register(echo)
    )
    litellm = load_litellm()
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(responder=respond) as server:
        workspace = make_workspace(Path(tmp))
        use_model_server(workspace, server)
        (workspace.agents_dir / "bench").mkdir()
        (workspace.agents_dir / "bench" / "AGENT.md").write_text(AGENT)
        runtime = Runtime.load(workspace, get_plugin_manager(plugins=[tools]))
        profile = runtime.agents.load("bench")
        loop = runtime.loop

        def turn(i: int) -> tuple[float, list[dict]]:
            before = len(server.requests)
            start = time.perf_counter()
            result = loop.run_turn(profile, "go", session_id=f"bench-{i}")
            elapsed = time.perf_counter() - start
            assert result.success and len(result.tool_calls) == 1, result
            return elapsed, server.requests[before:]

        def direct(requests: list[dict]) -> float:
            start = time.perf_counter()
            for body in requests:
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

        for i in range(args.warmup):
            _, sent = turn(-1 - i)
            direct(sent)
        turns, directs = [], []
        for i in range(args.turns):
            elapsed, sent = turn(i)
            turns.append(elapsed * 1000)
            directs.append(direct(sent) * 1000)
        runtime.close()

    t, d = statistics.median(turns), statistics.median(directs)
    print(f"python {sys.version.split()[0]}, {args.turns} turns after {args.warmup} warm-up")
    print(f"turn with one tool call (2 provider calls): median {t:.2f} ms, best {min(turns):.2f}")
    print(f"same 2 litellm calls made directly:         median {d:.2f} ms, best {min(directs):.2f}")
    print(f"ratio {t / d:.3f} (target <= 1.15); overhead per iteration {(t - d) / 2:.2f} ms")


if __name__ == "__main__":
    main()
