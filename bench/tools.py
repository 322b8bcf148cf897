"""What the sandbox and the executor cost per tool call, in-process.

Run by hand: ``python bench/tools.py [--runs 300]``. Builds a workspace with ``oryxos init``,
whitelists a few entries, then times (median and 90th percentile, µs or ms):
sandbox checks alone, a whole ``read_file`` call through the executor (sandbox, schema,
hooks, the SQLite audit row) and a ``shell`` call (``true``: one process). Results go to
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from oryxos.runtime import Runtime
from oryxos.testing import make_workspace
from oryxos.tools import ToolCall


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, p90) in microseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="oryxos-bench-tools-"))
    workspace = make_workspace(root)
    config = yaml.safe_load(workspace.config_file.read_text())
    config["sandbox"] = {
        "file": {"allowed_paths": ["/srv/data"]},
        "shell": {"allowed_commands": ["echo", "grep", "true"]},
        "http": {"allowed_domains": ["*.feishu.cn", "api.example.com"]},
    }
    workspace.config_file.write_text(yaml.safe_dump(config))
    (root / "notes.txt").write_text("hello\n" * 100)
    runtime = Runtime.load(workspace)
    sandbox, executor = runtime.sandbox, runtime.executor
    ctx = runtime.catalog.context(session_id="bench", channel="bench")
    cases = {
        "check_path (allowed)": lambda: sandbox.check_path("notes.txt"),
        "check_command 'echo a | grep a'": lambda: sandbox.check_command("echo a | grep a"),
        "check_url 'https://open.feishu.cn/x'": lambda: sandbox.check_url(
            "https://open.feishu.cn/x"
        ),
        "read_file through the executor (with audit row)": lambda: executor.run(
            ToolCall("read_file", {"path": "notes.txt"}), ctx
        ),
        "refused read_file (with audit row)": lambda: executor.run(
            ToolCall("read_file", {"path": "/etc/passwd"}), ctx
        ),
        "shell 'true' through the executor": lambda: executor.run(
            ToolCall("shell", {"command": "true"}), ctx
        ),
    }
    for fn in cases.values():  # warm-up: imports, the database, the catalog
        fn()
    print(f"{'operation':52} {'median':>10} {'p90':>10}")
    for label, fn in cases.items():
        median, p90 = timed(fn, args.runs)
        print(f"{label:52} {median / 1000:>8.2f}ms {p90 / 1000:>8.2f}ms")
    runtime.close()


if __name__ == "__main__":
    main()
