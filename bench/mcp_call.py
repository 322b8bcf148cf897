"""One MCP tool call through OryxOS's proxy versus the same call with the raw mcp SDK client.

Run by hand after ``bash .ci/setup-mcp.sh``: ``python bench/mcp_call.py [--calls 500]``.

Every side talks to the same server program (one process each) over stdio:

- raw: ``async with Client(StdioServerParameters(...), mode="legacy")`` and
  ``await client.call_tool(...)`` in a loop on an asyncio event loop (the SDK's own way, defaults);
- raw-alike: the same with ``cache=None``, as OryxOS configures its connections (the SDK's
  response cache wraps every incoming message in an eviction handler, which costs ≈ 0.05 ms a
  call; OryxOS lists tools once and needs no cache) — the like-for-like baseline;
- proxy: the catalog's proxy tool, ``tool.execute(args, ctx)`` called synchronously (what the
  executor does), which runs the call on OryxOS's shared event loop, driven by this thread;
- hop: an empty coroutine run on that shared loop — the fixed cost of the sync-to-async
  bridge.

Prints the median and p90 per call and the ratio proxy/raw (target ≤ 1.3), and proxy/raw-alike.
Results go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIDES = ("raw", "raw-alike", "proxy", "hop")
SERVERS = {
    "everything (node)": (
        [str(REPO / ".test-servers/node_modules/.bin/mcp-server-everything")],
        "echo",
        {"message": "hello"},
    ),
    "time (python)": (
        [str(Path(sys.executable).parent / "mcp-server-time"), "--local-timezone", "UTC"],
        "get_current_time",
        {"timezone": "UTC"},
    ),
}


def measure(argv: list[str], tool: str, args: dict, calls: int, warmup: int, rounds: int):
    """Per-call times of each side, batches alternated ``rounds`` times; one server process each.

    The raw clients live on an asyncio loop of this (main) thread; a raw batch runs on it and
    times each ``await``. The proxy and hop batches are plain synchronous calls from the same
    thread, as the executor makes them (OryxOS's shared loop is then driven by this thread).
    Alternating spreads the machine's noise evenly.
    """
    import asyncio

    from mcp import Client, StdioServerParameters

    sys.path.insert(0, str(REPO / "plugins"))
    from oryxos_mcp.config import parse_servers
    from oryxos_mcp.manager import McpManager
    from oryxos_mcp.server import Settings

    from oryxos.catalog import ToolCatalog

    text = "servers:\n  - name: bench\n    command: " + " ".join(argv) + "\n"
    manager = McpManager(parse_servers(text, "bench.yaml"), Settings(), Path(tempfile.gettempdir()))
    manager.start_all()
    catalog = ToolCatalog()
    manager.register(catalog)
    ctx = catalog.context()
    proxy_tool = catalog.build(tool, ctx)
    shared_loop = proxy_tool.server.loop

    async def nothing() -> None:
        return None

    raw_loop = asyncio.new_event_loop()
    clients: dict[str, object] = {}
    ready, stop = raw_loop.create_future(), asyncio.Event()

    async def hold_clients() -> None:
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        default = Client(params, read_timeout_seconds=30, mode="legacy")
        alike = Client(params, read_timeout_seconds=30, mode="legacy", cache=None)
        async with default as clients["raw"], alike as clients["raw-alike"]:
            ready.set_result(None)
            await stop.wait()

    holder = raw_loop.create_task(hold_clients())
    raw_loop.run_until_complete(ready)

    async def raw_batch(client, n: int) -> list[float]:
        times = []
        for _ in range(n):
            began = time.perf_counter()
            assert not (await client.call_tool(tool, args)).is_error
            times.append(time.perf_counter() - began)
        return times

    def proxy() -> None:
        outcome = proxy_tool.execute(args, ctx)
        assert outcome.success, outcome

    def hop() -> None:
        shared_loop.run(nothing, timeout=5)

    def sync_batch(call, n: int) -> list[float]:
        times = []
        for _ in range(n):
            began = time.perf_counter()
            call()
            times.append(time.perf_counter() - began)
        return times

    times: dict[str, list[float]] = {side: [] for side in SIDES}
    try:
        for round_ in range(rounds):
            for side in SIDES:
                n = calls + (0 if round_ else warmup)
                if side in clients:
                    batch = raw_loop.run_until_complete(raw_batch(clients[side], n))
                else:
                    batch = sync_batch(proxy if side == "proxy" else hop, n)
                times[side] += batch[len(batch) - calls :]
        return times
    finally:
        stop.set()
        raw_loop.run_until_complete(holder)
        raw_loop.close()
        manager.close()


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per batch")
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=10, help="alternate the sides this often")
    options = parser.parse_args()
    print(
        f"{options.calls} calls per round, {options.rounds} rounds, after {options.warmup} warm-up"
    )
    print(f"{'server':<18} {'side':<10} {'median ms':>10} {'p90 ms':>8}")
    for label, (argv, tool, args) in SERVERS.items():
        if not Path(argv[0]).exists():
            sys.exit(f"{argv[0]} is missing: run 'bash .ci/setup-mcp.sh' first")
        times = measure(argv, tool, args, options.calls, options.warmup, options.rounds)
        medians = {}
        for side in SIDES:
            medians[side], p90 = summary(times[side])
            print(f"{label:<18} {side:<10} {medians[side]:>10.3f} {p90:>8.3f}")
        proxy = medians["proxy"]
        print(
            f"{label:<18} ratio      {proxy / medians['raw']:>10.2f}  (target <= 1.3; "
            f"{proxy / medians['raw-alike']:.2f} against raw-alike)"
        )


if __name__ == "__main__":
    main()
