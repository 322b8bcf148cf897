"""The shell tool: real subprocesses, run without a shell, under the sandbox (sandbox_kit.py)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from oryxos.tools import ToolCall, ToolResult


def run(env, command, case="c", **args) -> ToolResult:
    ctx = env.runtime.catalog.context(session_id=case)
    return env.runtime.executor.run(ToolCall("shell", {"command": command, **args}), ctx)


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_the_plugin_registers_the_shell_tool(sandboxed):
    entry = sandboxed.runtime.catalog.get("shell")
    assert (entry.plugin, sorted(entry.groups)) == ("shell", ["shell"])


def test_output_exit_code_and_stderr(sandboxed):
    ok = run(sandboxed, "echo hello; ls nowhere-at-all || echo recovered")
    assert ok.success, ok.error_message
    assert ok.content.startswith("exit code 0\n[stdout]\nhello\nrecovered\n[stderr]\nls:")
    failed = run(sandboxed, "cat missing-file")
    assert not failed.success and failed.retryable
    assert failed.error_message.startswith("exit code 1\n[stderr]\ncat: missing-file")


def test_and_or_semantics_follow_sh(sandboxed):
    result = run(sandboxed, "false && echo no || echo yes; true || echo never; echo end")
    assert result.content == "exit code 0\n[stdout]\nyes\nend"


def test_pipes_quotes_globs_and_redirections(sandboxed):
    (sandboxed.project / "b.txt").write_text("beta\n")
    (sandboxed.project / "a.txt").write_text("alpha\n")
    result = run(sandboxed, "cat *.txt | grep -v alpha > out.log 2>&1; cat out.log")
    assert result.content.endswith("beta\nnotes\n".rstrip())  # notes.txt has "notes"
    assert (sandboxed.project / "out.log").read_text() == "beta\nnotes\n"
    quoted = run(sandboxed, "echo '*.txt' \"a;b\" 'x|y'")
    assert quoted.content == "exit code 0\n[stdout]\n*.txt a;b x|y"
    append = run(sandboxed, "echo more >> out.log; cat < out.log")
    assert append.content.endswith("beta\nnotes\nmore")
    swapped = run(sandboxed, "ls missing-x 2>&1 | grep -c missing-x")
    assert swapped.content == "exit code 0\n[stdout]\n1"


def test_the_command_runs_in_the_project_directory_without_secrets(sandboxed, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-should-not-leak")
    result = run(sandboxed, "find . -maxdepth 1 -name notes.txt")
    assert result.content == "exit code 0\n[stdout]\n./notes.txt"
    sandboxed.runtime.config.sandbox.shell.allowed_commands.append(sys.executable)
    env_dump = run(sandboxed, f"{sys.executable} -c 'import os; print(sorted(os.environ))'")
    assert env_dump.success and "DEEPSEEK_API_KEY" not in env_dump.content
    assert "'PATH'" in env_dump.content


def test_a_refused_command_never_runs(sandboxed):
    marker = sandboxed.project / "ran"
    result = run(sandboxed, f"touch {marker}", case="touch")
    assert not result.success and "sandbox.shell.allowed_commands" in result.error_message
    chained = run(sandboxed, f"echo ok; touch {marker}")
    assert not chained.success and not marker.exists()


def test_an_installed_but_missing_program_is_a_retryable_error(sandboxed):
    sandboxed.runtime.config.sandbox.shell.allowed_commands.append("no-such-program-xyz")
    result = run(sandboxed, "no-such-program-xyz --help")
    assert not result.success and result.retryable
    assert result.error_message == "command not found: no-such-program-xyz"


def test_output_is_capped(sandboxed):
    sandboxed.runtime.config.sandbox.shell.max_output_bytes = 1000
    big = sandboxed.project / "big.txt"
    big.write_text("y" * 50_000)
    result = run(sandboxed, "cat big.txt")
    assert result.success and "[49000 more bytes not shown]" in result.content
    assert len(result.content) < 1200


@pytest.mark.slow
def test_a_timeout_kills_the_whole_process_group(sandboxed):
    """A child that forks a grandchild: both die when the line times out."""
    sandboxed.runtime.config.sandbox.shell.allowed_commands.append(sys.executable)
    script = (
        "import subprocess, time; subprocess.Popen(['sleep', '41.7']); print('started', "
        "flush=True); time.sleep(60)"
    )
    started = time.monotonic()
    result = run(sandboxed, f'{sys.executable} -c "{script}" | cat', timeout_seconds=1.5)
    elapsed = time.monotonic() - started
    assert not result.success and not result.retryable
    assert result.error_message.startswith("timed out after 1.5 s")
    assert "started" in result.error_message
    assert elapsed < 6
    deadline = time.monotonic() + 3
    while _processes_with("41.7") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with("41.7") == []


def test_the_timeout_cannot_exceed_the_configured_limit(sandboxed):
    sandboxed.runtime.config.sandbox.shell.timeout_seconds = 0.5
    started = time.monotonic()
    result = run(sandboxed, "sleep 5", timeout_seconds=100)
    assert not result.success and "timed out after 0.5 s" in result.error_message
    assert time.monotonic() - started < 4


def test_stragglers_are_killed_when_the_line_finishes(sandboxed):
    """A program that leaves a background child behind: the child dies with the call."""
    sandboxed.runtime.config.sandbox.shell.allowed_commands.append(sys.executable)
    script = (
        "import subprocess, sys; subprocess.Popen(['sleep', '43.9'], stdout=subprocess.DEVNULL,"
        " stderr=subprocess.DEVNULL); print('parent done')"
    )
    result = run(sandboxed, f'{sys.executable} -c "{script}"')
    assert result.success and "parent done" in result.content
    deadline = time.monotonic() + 3
    while _processes_with("43.9") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with("43.9") == []
    assert os.getpgid(0) != 0  # the test process itself was never signalled


def test_redirections_refuse_fifos_instead_of_blocking(sandboxed):
    fifo = sandboxed.project / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    for line, message in (
        ("echo hi > pipe", "pipe for a redirection: No such device"),  # no reader: ENXIO
        ("cat < pipe", "pipe is not a regular file"),
    ):
        result = run(sandboxed, line)
        assert not result.success and result.retryable, line
        assert message in result.error_message, result.error_message
    missing = run(sandboxed, "cat < nothing-here.txt")
    assert "cannot open" in missing.error_message and "No such file" in missing.error_message
    assert time.monotonic() - started < 3
