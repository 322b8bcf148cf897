"""Helpers for the MCP plugin's tests: where the real servers are, and processes we started.

The real servers are installed by ``.ci/setup-mcp.sh`` (CI runs it; run it once locally). A
missing server makes its tests FAIL with that instruction — never skip.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
NPM_BIN = REPO / ".test-servers" / "node_modules" / ".bin"
PY_BIN = Path(sys.executable).parent
FAKE = Path(__file__).with_name("fake_server.py")
SETUP_HINT = "run 'bash .ci/setup-mcp.sh' to install the MCP test servers"


def npm_server(name: str) -> str:
    """Path of an npm server installed in .test-servers/ (fails the test if missing)."""
    path = NPM_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: {SETUP_HINT}")
    return str(path)


def py_server(name: str) -> str:
    """Path of a PyPI server's script in this Python environment (fails if missing)."""
    path = PY_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: {SETUP_HINT}")
    return str(path)


def fake(mode: str, *args: str) -> str:
    """The command of the stdlib fake server in the given mode."""
    return " ".join([sys.executable, str(FAKE), mode, *args])


def children(pid: int | None = None) -> dict[int, str]:
    """Live (non-zombie) descendants of ``pid`` (this process): pid → command line."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    cmdlines: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        parents[int(entry.name)] = int(fields[1])
        cmdlines[int(entry.name)] = cmd
    out: dict[int, str] = {}
    frontier = [root]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in out:
                out[child] = cmdlines[child]
                frontier.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
