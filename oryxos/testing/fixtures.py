"""An opt-in pytest plugin for OryxOS and its plugin authors.

Enable it with ``pytest_plugins = ["oryxos.testing"]`` in a conftest.py (or ``-p
oryxos.testing``). It gives fresh, isolated pieces — never globals:

- ``oryxos_make_pm(plugins=..., entry_points=True, disabled=...)`` → a new plugin manager;
- ``oryxos_pm`` → a new plugin manager with every installed plugin;
- ``oryxos_workspace`` → a workspace created by ``oryxos init`` in a temporary directory;
- ``oryxos_inline_plugin(**hooks)`` → a plugin object made from plain functions;
- ``oryxos_runtime`` → a Runtime on that workspace;
- ``oryxos_cli`` → runs ``oryxos ...`` in-process on that workspace, optionally with inline
  plugins, and returns click's Result;
- ``oryxos_model_server`` → a started :class:`ScriptedModelServer`, an OpenAI-compatible
  chat-completions server on 127.0.0.1 that answers from a script of :class:`Reply` objects;
  :func:`use_model_server` points a workspace's provider at it.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from oryxos import hookimpl
from oryxos.plugins import PluginManager, get_plugin_manager
from oryxos.testing.server import ScriptedModelServer
from oryxos.workspace import Workspace

ORYXOS_ENV = (
    "ORYXOS_WORKSPACE",
    "ORYXOS_DISABLE_PLUGINS",
    "ORYXOS_LOAD_PLUGINS",
    "ORYXOS_TRACE_PLUGINS",
    "ORYXOS_LOG_LEVEL",
)


def inline_plugin(name: str = "inline", **hooks: Callable[..., Any]) -> tuple[str, object]:
    """A ``(name, plugin)`` pair whose hooks are the given functions (marked as hookimpls).

    >>> inline_plugin("hello", oryxos_register_tools=lambda catalog: ...)
    """
    plugin = types.SimpleNamespace(__name__=f"inline:{name}")
    for hook_name, fn in hooks.items():
        setattr(plugin, hook_name, hookimpl(fn))
    return name, plugin


def make_workspace(directory: Path) -> Workspace:
    """Create a workspace as ``oryxos init`` does, in ``directory``."""
    from oryxos.commands.init import create_workspace

    workspace = Workspace(directory / ".oryxos")
    create_workspace(workspace.path)
    return workspace


class CliInvoker:
    """Runs the ``oryxos`` CLI in-process against one workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def invoke(
        self,
        args: Sequence[str],
        *,
        plugins: Iterable[tuple[str, object]] = (),
        input: str | None = None,
        env: dict[str, str] | None = None,
        entry_points: bool = True,
    ) -> Any:
        from click.testing import CliRunner

        from oryxos.cli import build_cli
        from oryxos.commands import CliState

        pm = get_plugin_manager(
            disabled=self.workspace.disabled_plugins(),
            plugins=list(plugins),
            entry_points=entry_points,
            environ=env,
        )
        cli = build_cli(pm)
        runner = CliRunner()
        return runner.invoke(
            cli,
            ["--workspace", str(self.workspace.path), *args],
            input=input,
            env=env,
            obj=CliState(pm=pm),
            catch_exceptions=False,
        )


@pytest.fixture(autouse=True)
def _oryxos_clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ORYXOS_* variable of the developer's shell leaks into a test."""
    for name in ORYXOS_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def oryxos_make_pm() -> Callable[..., PluginManager]:
    def make(
        plugins: Iterable[tuple[str, object]] = (),
        *,
        entry_points: bool = True,
        disabled: Iterable[str] = (),
        environ: dict[str, str] | None = None,
    ) -> PluginManager:
        return get_plugin_manager(
            plugins=plugins, entry_points=entry_points, disabled=disabled, environ=environ or {}
        )

    return make


@pytest.fixture
def oryxos_pm(oryxos_make_pm: Callable[..., PluginManager]) -> PluginManager:
    return oryxos_make_pm()


@pytest.fixture
def oryxos_inline_plugin() -> Callable[..., tuple[str, object]]:
    return inline_plugin


@pytest.fixture
def oryxos_workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


@pytest.fixture
def oryxos_runtime(oryxos_workspace: Workspace, oryxos_pm: PluginManager) -> Any:
    from oryxos.runtime import Runtime

    runtime = Runtime.load(oryxos_workspace, oryxos_pm)
    yield runtime
    runtime.close()


@pytest.fixture
def oryxos_cli(oryxos_workspace: Workspace) -> CliInvoker:
    return CliInvoker(oryxos_workspace)


@pytest.fixture
def oryxos_model_server() -> Any:
    """A started :class:`ScriptedModelServer` (script it with ``.script(Reply...)``)."""
    server = ScriptedModelServer().start()
    yield server
    server.stop()
