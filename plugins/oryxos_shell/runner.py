"""Runs a checked :class:`~oryxos.shell_syntax.ShellPlan` with subprocess, never with a shell.

- Steps run in order; ``&&`` runs the next pipeline only after exit code 0, ``||`` only after a
  non-zero one, ``;`` and newlines always (left to right, as sh does).
- A pipeline's commands are connected with pipes we create; redirections open the files that
  the sandbox already checked; ``2>&1`` and friends duplicate descriptors in the written order.
- Every command starts in a new session (its own process group). When the deadline passes,
  and again when the line finishes, every group is sent SIGKILL, so nothing the line started
  outlives the tool call (a program that calls setsid itself escapes — see docs/sandbox.md).
- stdout (of the last command of each pipeline) and stderr (of every command) are read by two
  threads, each keeping at most ``max_output`` bytes and discarding the rest.
- The environment is a short allowlist (PATH, HOME, locale, ...): API keys and other secrets
  in the server's environment are not passed to commands.
"""

from __future__ import annotations

import contextlib
import glob as globbing
import os
import signal
import stat
import subprocess
import threading
import time
from dataclasses import dataclass

from oryxos.errors import OryxError
from oryxos.shell_syntax import ShellPlan, SimpleCommand

#: Environment variables passed to commands; nothing else from the server's environment.
ENV_ALLOWLIST = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "USER", "LOGNAME")


@dataclass
class RunResult:
    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool = False
    stdout_dropped: int = 0
    stderr_dropped: int = 0


class _Collector(threading.Thread):
    """Drains one pipe, keeping the first ``limit`` bytes."""

    def __init__(self, fd: int, limit: int):
        super().__init__(daemon=True)
        self.fd = fd
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                room = self.limit - len(self.data)
                self.data += chunk[: max(room, 0)]
                self.dropped += max(len(chunk) - max(room, 0), 0)
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def command_env(cwd: str) -> dict[str, str]:
    env = {name: os.environ[name] for name in ENV_ALLOWLIST if name in os.environ}
    env["PWD"] = cwd
    return env


def expand_words(command: SimpleCommand, cwd: str) -> list[str]:
    """argv after ``~`` and glob expansion (a pattern with no match stays as written, as sh)."""
    argv: list[str] = []
    for word in command.words:
        text = os.path.expanduser(word.text) if word.tilde else word.text
        if word.glob:
            matches = sorted(globbing.glob(text, root_dir=cwd))
            if matches:
                argv.extend(matches)
                continue
        argv.append(text)
    return argv


class PlanRunner:
    """One run of one plan. Not reusable."""

    def __init__(self, plan: ShellPlan, *, cwd: str, timeout: float, max_output: int):
        self.plan = plan
        self.cwd = cwd
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.max_output = max_output
        self.groups: list[int] = []
        self.processes: list[subprocess.Popen[bytes]] = []
        self.timed_out = False
        self._opened: list[int] = []

    def run(self) -> RunResult:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        out, err = _Collector(out_r, self.max_output), _Collector(err_r, self.max_output)
        out.start()
        err.start()
        status = 0
        try:
            for step in self.plan.steps:
                if (step.op == "&&" and status != 0) or (step.op == "||" and status == 0):
                    continue
                status = self._pipeline(step.pipeline, out_w, err_w)
                if self.timed_out:
                    break
        finally:
            self._kill_all()
            for process in self.processes:
                process.wait()
            os.close(out_w)
            os.close(err_w)
            for fd in self._opened:
                os.close(fd)
            out.join(5)
            err.join(5)
        return RunResult(
            124 if self.timed_out else status,
            out.text(),
            err.text(),
            self.timed_out,
            out.dropped,
            err.dropped,
        )

    def _open(self, path: str, mode: str) -> int:
        """Open a redirection target. Only regular files (and /dev/null): opening a FIFO would
        block this thread outside the timeout's reach, so the open is non-blocking and the
        file type is checked on the open descriptor (no race with a swap after a check)."""
        flags = {"r": os.O_RDONLY, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                 "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND}[mode]  # fmt: skip
        try:
            fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
        except OSError as err:
            raise OryxError(f"cannot open {path} for a redirection: {err.strerror}") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) and path != os.devnull:
            os.close(fd)
            raise OryxError(f"{path} is not a regular file; redirections only use files")
        os.set_blocking(fd, True)
        self._opened.append(fd)
        return fd

    def _pipeline(self, pipeline: list[SimpleCommand], out_w: int, err_w: int) -> int:
        processes: list[subprocess.Popen[bytes]] = []
        stdin: int = subprocess.DEVNULL
        to_close: list[int] = []
        try:
            for index, command in enumerate(pipeline):
                last = index == len(pipeline) - 1
                next_r = None
                if last:
                    stdout = out_w
                else:
                    next_r, stdout = os.pipe()
                    to_close += [next_r, stdout]
                fds = {0: stdin, 1: stdout, 2: err_w}
                for redirect in command.redirects:
                    if redirect.mode == "dup":
                        fds[redirect.fd] = fds[redirect.dup_of]  # type: ignore[index]
                    elif redirect.fd == 3:
                        fds[1] = fds[2] = self._open(redirect.target, redirect.mode)
                    else:
                        fds[redirect.fd] = self._open(redirect.target, redirect.mode)
                try:
                    process = subprocess.Popen(
                        expand_words(command, self.cwd),
                        executable=command.executable,
                        stdin=fds[0],
                        stdout=fds[1],
                        stderr=fds[2],
                        cwd=self.cwd,
                        env=command_env(self.cwd),
                        start_new_session=True,
                    )
                except OSError as err:
                    os.write(err_w, f"{command.argv[0]}: {err.strerror}\n".encode())
                    return 126
                processes.append(process)
                self.processes.append(process)
                self.groups.append(process.pid)
                if next_r is not None:
                    stdin = next_r
        finally:
            for fd in to_close:  # the children hold their own copies
                os.close(fd)
        return self._wait(processes)

    def _wait(self, processes: list[subprocess.Popen[bytes]]) -> int:
        for process in processes:
            remaining = self.deadline - time.monotonic()
            try:
                process.wait(timeout=max(remaining, 0))
            except subprocess.TimeoutExpired:
                self.timed_out = True
                self._kill_all()
                for other in processes:
                    other.wait()
                return 124
        code = processes[-1].returncode
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N, as sh reports

    def _kill_all(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


def run_plan(plan: ShellPlan, *, cwd: str, timeout: float, max_output: int) -> RunResult:
    """Run a checked plan; see the module docstring for the semantics."""
    return PlanRunner(plan, cwd=cwd, timeout=timeout, max_output=max_output).run()
