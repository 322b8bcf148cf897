"""One MCP tool call through OryxOS's proxy versus the same call with the raw mcp SDK client.

Run by hand after ``bash .ci/setup-mcp.sh``: ``python bench/mcp_call.py [--calls 500]``.

Both sides talk to the same server program (one process each) over stdio:

- raw: ``async with Client(StdioServerParameters(...), mode="legacy")`` and
  ``await client.call_tool(...)`` in a loop, inside ``anyio.run`` (the SDK's own way);
- proxy: the catalog's proxy tool, ``tool.execute(args, ctx)`` from a plain synchronous thread
  (what the executor does), which crosses to OryxOS's event-loop thread and back.

Prints the median and p90 per call and the ratio proxy/raw. Target: ratio ≤ 1.3.
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
    """Raw and proxy batches, alternated ``rounds`` times, each side on its own server process.

    Everything runs inside one ``anyio.run``: a raw batch awaits the SDK client on this loop;
    a proxy batch calls the synchronous proxy tool from here (this loop idles meanwhile, the
    proxy's own loop thread does the I/O). Alternating spreads the machine's noise evenly.
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

    async def main() -> tuple[list[float], list[float]]:
        raw_times: list[float] = []
        proxy_times: list[float] = []
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with Client(params, read_timeout_seconds=30, mode="legacy") as client:
            for round_ in range(rounds):
                for i in range(warmup + calls):
                    began = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    elapsed = time.perf_counter() - began
                    assert not result.is_error
                    if i >= warmup or round_:
                        raw_times.append(elapsed)
                for i in range(warmup + calls):
                    began = time.perf_counter()
                    outcome = proxy_tool.execute(args, ctx)
                    elapsed = time.perf_counter() - began
                    assert outcome.success, outcome
                    if i >= warmup or round_:
                        proxy_times.append(elapsed)
        return raw_times, proxy_times

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
    parser.add_argument("--rounds", type=int, default=10, help="alternate raw/proxy this often")
    options = parser.parse_args()
    print(
        f"{options.calls} calls per round, {options.rounds} rounds, after {options.warmup} warm-up"
    )
    print(f"{'server':<18} {'side':<6} {'median ms':>10} {'p90 ms':>8}")
    for label, (argv, tool, args) in SERVERS.items():
        if not Path(argv[0]).exists():
            sys.exit(f"{argv[0]} is missing: run 'bash .ci/setup-mcp.sh' first")
        raw_times, proxy_times = measure(
            argv, tool, args, options.calls, options.warmup, options.rounds
        )
        raw_median, raw_p90 = summary(raw_times)
        proxy_median, proxy_p90 = summary(proxy_times)
        print(f"{label:<18} {'raw':<6} {raw_median:>10.3f} {raw_p90:>8.3f}")
        print(f"{label:<18} {'proxy':<6} {proxy_median:>10.3f} {proxy_p90:>8.3f}")
        print(f"{label:<18} ratio  {proxy_median / raw_median:>10.2f}  (target <= 1.3)")


if __name__ == "__main__":
    main()
