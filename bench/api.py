"""REST API benchmarks: health throughput vs bare Flask+waitress, concurrent turns, idle RSS.

Run by hand: ``python bench/api.py [--seconds 5] [--sessions 500] [--latency 1.0]``.
Everything runs on 127.0.0.1 in processes this script starts (and stops).

1. ``GET /api/v1/health`` requests/s of ``oryxos serve`` against a bare Flask app on waitress
   answering the same path with a constant JSON body, same thread count, in the same run
   (target: ≥ 0.9×). Load from ``wrk`` (Debian package) when installed, else a Python
   keep-alive load generator with threads.
2. Concurrent sessions: N sessions each send one message at once; the model (the scripted
   OpenAI-compatible server of ``oryxos.testing``) answers after ``latency`` seconds. Makespan
   against the ideal ``latency × ceil(N / threads)`` (target ≤ 1.3×).
3. Idle RSS of ``oryxos serve`` after start-up and one request (target ≤ 150 MiB).
Results go to docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

BARE_APP = textwrap.dedent(
    """
    import sys
    from flask import Flask, jsonify
    from waitress import serve

    app = Flask("bare")

    @app.get("/api/v1/health")
    def health():
        return jsonify(status="ok")

    serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=int(sys.argv[2]),
          _quiet=True)
    """
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/v1/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("server did not become ready")


def start_oryxos(project: Path, port: int, threads: int) -> subprocess.Popen:
    log = os.environ.get("BENCH_SERVER_STDERR")  # a file to keep the server's stderr in
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "oryxos.cli",
            "-w",
            str(project),
            "serve",
            "--port",
            str(port),
            "--threads",
            str(threads),
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "a") if log else subprocess.DEVNULL,  # noqa: SIM115
    )
    wait_ready(port, proc)
    return proc


def start_bare(port: int, threads: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", BARE_APP, str(port), str(threads)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_ready(port, proc)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()


# Load generation ------------------------------------------------------------------------------


def load_wrk(port: int, seconds: float, connections: int) -> float:
    out = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{connections}",
            f"-d{int(seconds)}s",
            f"http://127.0.0.1:{port}/api/v1/health",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def load_python(port: int, seconds: float, connections: int) -> float:
    stop_at = time.monotonic() + seconds
    counts = [0] * connections

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        while time.monotonic() < stop_at:
            conn.request("GET", "/api/v1/health")
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                counts[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.monotonic() - started)


def health_rps(port: int, seconds: float, connections: int) -> tuple[float, str]:
    if shutil.which("wrk"):
        load_wrk(port, 1, connections)  # warm-up
        return load_wrk(port, seconds, connections), "wrk"
    load_python(port, 1, connections)
    return load_python(port, seconds, connections), "python threads"


# Benchmarks -----------------------------------------------------------------------------------


def bench_health(project: Path, seconds: float, threads: int, connections: int, rounds: int):
    results = {"oryxos": [], "bare": []}
    tool = ""
    for _ in range(rounds):  # interleaved, so that background load hits both alike
        for name in ("bare", "oryxos"):
            port = free_port()
            proc = (
                start_oryxos(project, port, threads)
                if name == "oryxos"
                else start_bare(port, threads)
            )
            try:
                rps, tool = health_rps(port, seconds, connections)
            finally:
                stop(proc)
            results[name].append(rps)
    best = {name: max(values) for name, values in results.items()}
    return best, tool, results


def rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def bench_rss(project: Path) -> float:
    port = free_port()
    proc = start_oryxos(project, port, 64)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        conn.request("GET", "/")
        conn.getresponse().read()
        time.sleep(3)
        return rss_mib(proc.pid)
    finally:
        stop(proc)


def _post(port: int, path: str, body: dict) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = json.loads(response.read() or b"{}")
    if response.status >= 300:
        raise RuntimeError(f"{path}: {response.status} {data}")
    return data


def bench_sessions(project: Path, sessions: int, latency: float, threads: int) -> dict:
    from oryxos.testing import Reply, ScriptedModelServer, use_model_server
    from oryxos.workspace import Workspace

    model = ScriptedModelServer(responder=lambda body: Reply.answer("ok").after(latency))
    model.start()
    use_model_server(Workspace(project / ".oryxos"), model)
    port = free_port()
    proc = start_oryxos(project, port, threads)
    try:
        ids = [
            _post(port, "/api/v1/sessions", {"user": f"u{i}"})["session_id"]
            for i in range(sessions + 1)
        ]
        _post(port, f"/api/v1/sessions/{ids.pop()}/messages", {"message": "warm up"})
        with concurrent.futures.ThreadPoolExecutor(max_workers=sessions) as pool:
            started = time.monotonic()
            futures = [
                pool.submit(_post, port, f"/api/v1/sessions/{sid}/messages", {"message": "hi"})
                for sid in ids
            ]
            answers = [f.result() for f in futures]
            makespan = time.monotonic() - started
        assert all(a["answer"] == "ok" for a in answers)
        ideal = latency * math.ceil(sessions / threads)
        return {
            "sessions": sessions,
            "threads": threads,
            "makespan": makespan,
            "ideal": ideal,
            "ratio": makespan / ideal,
        }
    finally:
        stop(proc)
        model.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--threads", type=int, default=8, help="waitress threads for health")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--session-threads", type=int, nargs="+", default=[64, 512])
    parser.add_argument("--skip", nargs="*", default=[], choices=["health", "rss", "sessions"])
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        subprocess.run(
            [sys.executable, "-m", "oryxos.cli", "-w", str(project), "init"],
            check=True,
            capture_output=True,
        )
        if "health" not in args.skip:
            best, tool, raw = bench_health(
                project, args.seconds, args.threads, args.connections, args.rounds
            )
            print(
                f"health ({tool}, {args.threads} threads, {args.connections} connections, "
                f"best of {args.rounds}): oryxos {best['oryxos']:.0f} req/s, bare "
                f"{best['bare']:.0f} req/s, ratio {best['oryxos'] / best['bare']:.2f} "
                f"(all: {json.dumps({k: [round(v) for v in vs] for k, vs in raw.items()})})"
            )
        if "rss" not in args.skip:
            print(f"idle RSS of oryxos serve: {bench_rss(project):.1f} MiB")
        if "sessions" not in args.skip:
            for threads in args.session_threads:
                r = bench_sessions(project, args.sessions, args.latency, threads)
                print(
                    f"{r['sessions']} concurrent turns, model latency {args.latency} s, "
                    f"{threads} threads: makespan {r['makespan']:.2f} s, ideal "
                    f"{r['ideal']:.2f} s, ratio {r['ratio']:.2f}"
                )


if __name__ == "__main__":
    main()
