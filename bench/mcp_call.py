"""One MCP tool call through OryxOS's proxy versus the same call with the raw mcp SDK client.

Run by hand after ``bash .ci/setup-mcp.sh``: ``python bench/mcp_call.py [--calls 500]``.

Every side talks to the same server program (one process each) over stdio:

- raw: ``async with Client(StdioServerParameters(...), mode="legacy")`` and
  ``await client.call_tool(...)`` in a loop, inside ``anyio.run`` (the SDK's own way, defaults);
- raw-alike: the same with ``cache=None``, as OryxOS configures its connections (the SDK's
  response cache wraps every incoming message in an eviction handler, which costs ≈ 0.05 ms a
  call; OryxOS lists tools once and needs no cache) — the like-for-like baseline;
- proxy: the catalog's proxy tool, ``tool.execute(args, ctx)`` called synchronously (what the
  executor does), which crosses to OryxOS's event-loop thread and back;
- hop: an empty coroutine sent through that loop thread and back — the fixed cost of the
  sync-to-async bridge, two thread wake-ups.

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

    Everything runs inside one ``anyio.run``: a raw batch awaits an SDK client on this loop;
    a proxy batch calls the synchronous proxy tool from here (this loop idles meanwhile, the
    proxy's own loop thread does the I/O); a hop batch sends an empty coroutine through that
    same loop thread and back. Alternating spreads the machine's noise evenly.
    """
    import anyio
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
    loop_thread = proxy_tool.server.loop

    async def nothing() -> None:
        return None

    async def main() -> dict[str, list[float]]:
        times: dict[str, list[float]] = {side: [] for side in SIDES}
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with (
            Client(params, read_timeout_seconds=30, mode="legacy") as default,
            Client(params, read_timeout_seconds=30, mode="legacy", cache=None) as alike,
        ):

            async def raw_default() -> None:
                assert not (await default.call_tool(tool, args)).is_error

            async def raw_alike() -> None:
                assert not (await alike.call_tool(tool, args)).is_error

            async def proxy() -> None:
                outcome = proxy_tool.execute(args, ctx)
                assert outcome.success, outcome

            async def hop() -> None:
                loop_thread.submit_call(nothing).result()

            sides = {"raw": raw_default, "raw-alike": raw_alike, "proxy": proxy, "hop": hop}
            for round_ in range(rounds):
                for side, call in sides.items():
                    for i in range(warmup + calls):
                        began = time.perf_counter()
                        await call()
                        elapsed = time.perf_counter() - began
                        if i >= warmup or round_:
                            times[side].append(elapsed)
        return times

    try:
        return anyio.run(main)
    finally:
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
