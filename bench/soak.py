"""Soak: resident memory of ``oryxos serve`` over many turns against the scripted model server.

Run by hand: ``python bench/soak.py [--turns 10000] [--clients 4] [--session-turns 10]``.

In a temporary workspace made by ``oryxos init``, it starts two processes — the scripted model
server (``python -m oryxos.testing.model_server``; every turn is one ``current_time`` tool call
and an answer, i.e. two model requests) and ``oryxos serve`` — and drives turns through the REST
API from ``--clients`` threads: each client creates a session, sends ``--session-turns``
messages to it, then starts the next session. After ``--warmup`` turns it reads the server's
RSS (``VmRSS`` in /proc/PID/status) as the baseline, then again every ``--every`` turns.

Prints a table of RSS over turns and the growth from the baseline to the end (target < 5 %),
and the turn latency. Results go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SCRIPT = """
steps:
  - when: {role: user}
    repeat: true
    tool_calls: [{name: current_time, arguments: {timezone: Asia/Shanghai}}]
  - when: {role: tool}
    repeat: true
    answer: It is the time shown above.
"""

AGENT = """---
name: default
description: Soak agent.
tools: [current_time]
settings:
  max_iterations: 4
  max_history_turns: 20
---
Answer with the current time.
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{proc.args} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{url} not healthy after {timeout} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--session-turns", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--every", type=int, default=1000)
    args = parser.parse_args()

    import httpx
    import yaml

    bin_dir = Path(sys.executable).parent
    oryxos = str(bin_dir / "oryxos")
    with tempfile.TemporaryDirectory(prefix="oryxos-soak-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ORYXOS_")}
        subprocess.run([oryxos, "init"], cwd=root, env=env, check=True, capture_output=True)
        (root / "script.yaml").write_text(SCRIPT)
        (root / ".oryxos/agents/default/AGENT.md").write_text(AGENT)
        model_port, api_port = free_port(), free_port()
        config_file = root / ".oryxos/config.yaml"
        config = yaml.safe_load(config_file.read_text())
        config["providers"] = {
            "offline": {
                "model": "openai/scripted",
                "api_base": f"http://127.0.0.1:{model_port}/v1",
                "api_key": "sk-soak",
                "max_retries": 0,
            }
        }
        config["default_provider"] = "offline"
        config["logging"] = {"level": "WARNING"}
        config_file.write_text(yaml.safe_dump(config, sort_keys=False))

        procs = []
        try:
            model = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "oryxos.testing.model_server",
                    "--script",
                    "script.yaml",
                    "--port",
                    str(model_port),
                ],
                cwd=root,
                env=env,
                stdout=subprocess.DEVNULL,
            )
            procs.append(model)
            serve = subprocess.Popen(
                [oryxos, "serve", "--port", str(api_port), "--threads", str(args.clients * 2)],
                cwd=root,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            procs.append(serve)
            api = f"http://127.0.0.1:{api_port}/api/v1"
            wait_healthy(f"{api}/health", serve)

            counter = {"started": 0, "done": 0, "failed": 0}
            lock = threading.Lock()
            latencies: list[float] = []
            samples: list[tuple[int, int]] = [(0, rss_kib(serve.pid))]
            marks = {args.warmup} | set(range(args.every, args.turns + 1, args.every))
            stop = threading.Event()

            def client(index: int) -> None:
                http = httpx.Client(base_url=api, timeout=60)
                session_no = 0
                while not stop.is_set():
                    session_no += 1
                    user = f"soak{index}x{session_no}"
                    created = http.post("/sessions", json={"agent": "default", "user": user})
                    sid = created.json()["session_id"]
                    for _ in range(args.session_turns):
                        with lock:  # reserve a turn, so that exactly --turns are sent
                            if counter["started"] >= args.turns:
                                stop.set()
                                return
                            counter["started"] += 1
                        start = time.perf_counter()
                        reply = http.post(f"/sessions/{sid}/messages", json={"message": "time?"})
                        elapsed = time.perf_counter() - start
                        with lock:
                            ok = reply.status_code == 200 and reply.json().get("success")
                            counter["done" if ok else "failed"] += 1
                            latencies.append(elapsed)
                            n = counter["done"] + counter["failed"]
                            if n in marks:
                                samples.append((n, rss_kib(serve.pid)))

            started = time.monotonic()
            threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.monotonic() - started
            samples.append((counter["done"] + counter["failed"], rss_kib(serve.pid)))
        finally:
            for proc in reversed(procs):
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.clients} clients, "
        f"{args.session_turns} turns per session, 2 model requests per turn"
    )
    print(
        f"turns: {counter['done']} ok, {counter['failed']} failed, in {wall:.0f} s "
        f"({counter['done'] / wall:.0f} turns/s)"
    )
    lat = sorted(latencies)
    print(
        f"turn latency: median {statistics.median(lat) * 1000:.1f} ms, "
        f"p90 {lat[int(len(lat) * 0.9)] * 1000:.1f} ms"
    )
    print(f"{'turns':>8}  {'RSS MiB':>8}")
    seen = set()
    for n, kib in samples:
        if n in seen:
            continue
        seen.add(n)
        print(f"{n:>8}  {kib / 1024:>8.1f}")
    base = next(kib for n, kib in samples if n == args.warmup)
    end = samples[-1][1]
    growth = (end - base) / base * 100
    print(f"growth after warm-up ({args.warmup} turns) to the end: {growth:+.1f} % (target < 5 %)")


if __name__ == "__main__":
    main()
