"""End-to-end helpers: run an example exactly as its README says, in real processes.

Each test copies ``examples/<name>/`` to a temporary folder, starts the stand-ins the README
starts (the scripted model server, stubs) as subprocesses on free ports (the README's port
variables), runs ``oryxos`` commands as subprocesses there, and reads the audit tables with
sqlite3. Every process a test starts is stopped when it ends.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args} exited with {proc.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"{proc.args} did not listen on port {port} in {timeout} s")


class Example:
    """One example copied to a temporary folder, with the environment its README uses."""

    def __init__(self, name: str, tmp_path: Path):
        self.dir = tmp_path / name
        shutil.copytree(EXAMPLES / name, self.dir, symlinks=True)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ORYXOS_")}
        self.env["PATH"] = f"{BIN}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["HOME"] = str(tmp_path / "home")
        self.env["PYTHONUNBUFFERED"] = "1"
        self.procs: list[subprocess.Popen] = []

    def start(self, *args: str, port: int | None = None, name: str = "proc") -> subprocess.Popen:
        """Start a background process (the README's ``... &``) and wait for its port."""
        log = open(self.dir / f"{name}.out", "w")  # noqa: SIM115 (closed with the process)
        proc = subprocess.Popen(
            list(args), cwd=self.dir, env=self.env, stdout=log, stderr=subprocess.STDOUT
        )
        proc._log = log  # type: ignore[attr-defined]
        self.procs.append(proc)
        if port is not None:
            wait_for_port(port, proc)
        return proc

    def start_model(
        self, script: str, port: int, *, log: str | None = None, name: str = "model"
    ) -> subprocess.Popen:
        """The README's ``python -m oryxos.testing.model_server --script ... --port ... &``."""
        args = ["-m", "oryxos.testing.model_server", "--script", script, "--port", str(port)]
        if log:
            args += ["--log", log]
        return self.start(sys.executable, *args, port=port, name=name)

    def output(self, name: str) -> str:
        return (self.dir / f"{name}.out").read_text(encoding="utf-8", errors="replace")

    def run(
        self, *args: str, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        """Run a foreground command (``oryxos ...``) and return its result."""
        return subprocess.run(
            list(args),
            cwd=self.dir,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def oryxos(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return self.run(str(BIN / "oryxos"), *args, **kw)

    def stop(self, proc: subprocess.Popen, timeout: float = 15) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        proc._log.close()  # type: ignore[attr-defined]

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            self.stop(proc)

    def serve(self, port: int, name: str = "serve") -> subprocess.Popen:
        """``oryxos serve --port PORT &`` and wait until /api/v1/health answers."""
        import httpx

        proc = self.start(str(BIN / "oryxos"), "serve", "--port", str(port), port=port, name=name)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if (
                    httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2).status_code
                    == 200
                ):
                    return proc
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"oryxos serve on port {port} is not healthy: {self.output(name)}")

    def query(self, sql: str, *params: object) -> list[tuple]:
        """Rows from the example's database (read-only; WAL readers do not block writers)."""
        db = self.dir / ".oryxos" / "oryxos.db"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return conn.execute(sql, params).fetchall()


@pytest.fixture
def example(tmp_path: Path) -> Iterator:
    made: list[Example] = []

    def make(name: str) -> Example:
        ex = Example(name, tmp_path)
        made.append(ex)
        return ex

    yield make
    for ex in made:
        ex.stop_all()
