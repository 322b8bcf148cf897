"""Start-up cost of the CLI: `oryxos --help` and `oryxos plugins` against a bare baseline.

Run by hand: ``python bench/startup.py [--runs 20]``. Prints the median and the best wall time
of each command over several runs (new processes each time), and the import baseline
``python -c "import click, pydantic, pluggy"``. Target: ``oryxos --help`` ≤ 200 ms here.
Results go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "python -c 'import click, pydantic, pluggy' (baseline)": [
        sys.executable,
        "-c",
        "import click, pydantic, pluggy",
    ],
    "python -c pass (interpreter)": [sys.executable, "-c", "pass"],
    "oryxos --help": [sys.executable, "-m", "oryxos.cli", "--help"],
    "oryxos plugins": [sys.executable, "-m", "oryxos.cli", "plugins"],
    "oryxos --version": [sys.executable, "-m", "oryxos.cli", "--version"],
}


def measure(argv: list[str], runs: int, cwd: str) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    cwd = tempfile.mkdtemp(prefix="oryxos-bench-")
    try:
        subprocess.run(
            [sys.executable, "-m", "oryxos.cli", "init"],
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for argv in COMMANDS.values():  # warm the file cache
            measure(argv, 2, cwd)
        print(f"{'command':55} {'median ms':>10} {'best ms':>8}")
        for label, argv in COMMANDS.items():
            times = measure(argv, args.runs, cwd)
            print(f"{label:55} {statistics.median(times):10.1f} {min(times):8.1f}")
        print(f"\n{args.runs} runs each; python {sys.version.split()[0]}; {os.cpu_count()} cores")
    finally:
        shutil.rmtree(cwd)


if __name__ == "__main__":
    main()
