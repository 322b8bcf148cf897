"""Differential tests: the shell tool's grammar and runner against bash itself.

For random lines the grammar accepts, the words it produces and the output of running the plan
must be what bash produces (with globbing off, since the runner globs in its own directory).
Seeds are fixed, so a failure is reproducible; the random lines only use safe programs.
"""

from __future__ import annotations

import random
import subprocess

import pytest

from oryxos.shell_syntax import ShellSyntaxError, parse

WORD_PIECES = ["a", "b", "x y", " ", " ", "'", '"', "\\", "\\\\", "\\'", '\\"', "=", "-",
               "--o=v", "\t", "'q r'", '"s t"', "#", "%", ":", ",", "\\\n", "é", "''", '""']  # fmt: skip


def _bash(line: str, cwd=None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", "set -f; " + line],
        capture_output=True,
        cwd=cwd,
        timeout=10,
    )


def test_words_are_split_and_unquoted_as_bash_does():
    rng = random.Random(20261130)
    compared = 0
    for _ in range(1500):
        body = "".join(rng.choice(WORD_PIECES) for _ in range(rng.randint(1, 8)))
        line = "printf '%s\\0' START " + body
        try:
            plan = parse(line)
        except ShellSyntaxError:
            continue
        if len(plan.steps) != 1 or len(plan.steps[0].pipeline) != 1:
            continue
        compared += 1
        done = _bash(line)
        assert done.returncode == 0, (line, done.stderr)
        expected = [part.decode() for part in done.stdout.split(b"\0")[1:-1]]
        assert plan.steps[0].pipeline[0].argv[3:] == expected, repr(line)
    assert compared > 800


PROGRAMS = ["echo a", "echo 'b c'", "true", "false", "cat in.txt", "grep a in.txt",
            "grep zz in.txt", "ls missing-file"]  # fmt: skip
JOINERS = [" ; ", " && ", " || ", " | ", "\n"]
SUFFIXES = ["", "", " > out.txt", " >> out.txt", " 2>&1", " 2>/dev/null", " < in.txt"]


@pytest.mark.slow
def test_lists_pipes_and_redirections_behave_as_in_bash(sandboxed):
    """Same stdout, exit code and out.txt as bash, for random lists of whitelisted commands."""
    from oryxos_shell.runner import run_plan

    project = sandboxed.project
    rng = random.Random(7)
    compared = 0
    for _ in range(150):
        parts = [rng.choice(PROGRAMS) + rng.choice(SUFFIXES)]
        for _ in range(rng.randint(0, 3)):
            parts += [rng.choice(JOINERS), rng.choice(PROGRAMS) + rng.choice(SUFFIXES)]
        line = "".join(parts)
        if any(
            len(step.pipeline) > 1 and any(c.redirects for c in step.pipeline)
            for step in parse(line).steps
        ):
            continue  # commands of one pipeline run at once: their file writes race, in bash too
        compared += 1
        results = []
        for runner in ("bash", "oryxos"):
            (project / "in.txt").write_text("alpha\nbeta\n")
            (project / "out.txt").unlink(missing_ok=True)
            if runner == "bash":
                done = _bash(line, cwd=project)
                outcome = (done.returncode, done.stdout.decode())
            else:
                plan = sandboxed.runtime.sandbox.check_command(line)
                ran = run_plan(plan, cwd=str(project), timeout=10, max_output=65536)
                outcome = (ran.exit_code, ran.stdout)
            out_file = project / "out.txt"
            results.append((*outcome, out_file.read_text() if out_file.exists() else None))
        assert results[0] == results[1], repr(line)
    assert compared > 60
