"""Fixtures for the MCP plugin's tests (helpers are in mcp_helpers.py)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


@pytest.fixture
def write_servers(oryxos_workspace) -> Callable[[str], Path]:
    """Write .oryxos/mcp_servers.yaml of the test workspace."""

    def write(text: str) -> Path:
        path = oryxos_workspace.mcp_servers_file
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def fast_timeouts(oryxos_workspace) -> Callable[..., None]:
    """Append an ``mcp:`` section with short timeouts to the workspace's config.yaml."""

    def set_timeouts(start: float = 15, call: float = 10, backoff: float = 1) -> None:
        with open(oryxos_workspace.config_file, "a", encoding="utf-8") as handle:
            handle.write(
                f"\nmcp:\n  start_timeout_seconds: {start}\n  call_timeout_seconds: {call}\n"
                f"  restart_backoff_seconds: {backoff}\n"
            )

    return set_timeouts


@pytest.fixture
def disable_plugins(oryxos_workspace) -> Callable[..., None]:
    """Add plugin names to ``plugins.disabled`` of the workspace's config.yaml."""

    def disable(*names: str) -> None:
        import yaml

        path = oryxos_workspace.config_file
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        plugins = data.setdefault("plugins", {}) or {}
        plugins["disabled"] = [*(plugins.get("disabled") or []), *names]
        data["plugins"] = plugins
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    return disable


@pytest.fixture
def make_runtime(oryxos_workspace, oryxos_make_pm) -> Iterator[Callable[..., object]]:
    """Runtimes on the test workspace (with optional inline plugins), all closed afterwards."""
    from oryxos.runtime import Runtime

    made = []

    def make(plugins=()):
        from oryxos.config import load_config

        disabled = load_config(oryxos_workspace.config_file).plugins.disabled
        pm = oryxos_make_pm(plugins=list(plugins), disabled=disabled)
        runtime = Runtime.load(oryxos_workspace, pm)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()
