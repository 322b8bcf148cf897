"""One test per hook: each is called where DESIGN.md says, with what its docstring promises.

``test_docs.py`` fails when a hook lacks a ``test_hook_<name>`` here (or elsewhere in tests/).
"""

from __future__ import annotations

import types

import click
import pytest

from oryxos.plugins import get_plugin_manager
from oryxos.runtime import Runtime


def runtime_with(workspace, *plugins) -> Runtime:
    pm = get_plugin_manager(plugins=list(plugins), environ={})
    return Runtime.load(workspace, pm)


def test_hook_oryxos_addhooks(oryxos_workspace, oryxos_inline_plugin):
    specs = types.ModuleType("extra_specs")
    from oryxos.hookspecs import hookspec

    def oryxos_extra_routes(app):
        """A hook a plugin defines for others."""

    specs.oryxos_extra_routes = hookspec(oryxos_extra_routes)
    seen = []
    definer = oryxos_inline_plugin(
        "definer", oryxos_addhooks=lambda pluginmanager: pluginmanager.add_hookspecs(specs)
    )
    user = oryxos_inline_plugin("user", oryxos_extra_routes=lambda app: seen.append(app))
    pm = get_plugin_manager(plugins=[definer, user], entry_points=False, environ={})
    assert pm.report.broken == []
    pm.hook.oryxos_extra_routes(app="the-app")
    assert seen == ["the-app"]


def test_hook_oryxos_register_providers(oryxos_workspace, oryxos_inline_plugin):
    provider = object()
    plugin = oryxos_inline_plugin(
        "prov", oryxos_register_providers=lambda register, config: register("mine", provider)
    )
    runtime = runtime_with(oryxos_workspace, plugin)
    assert runtime.providers.get("mine") is provider
    assert runtime.providers.owner("mine") == "prov"


def test_hook_oryxos_register_tools(oryxos_workspace, oryxos_inline_plugin):
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    plugin = oryxos_inline_plugin(
        "shouter", oryxos_register_tools=lambda catalog: catalog.register(shout, groups=["fun"])
    )
    runtime = runtime_with(oryxos_workspace, plugin)
    entry = runtime.catalog.get("shout")
    assert (entry.plugin, entry.groups, entry.description) == (
        "shouter",
        frozenset({"fun"}),
        "Upper-case the text.",
    )
    ctx = runtime.catalog.context()
    assert runtime.catalog.build("shout", ctx).execute({"text": "hi"}, ctx).content == "HI"


def test_hook_oryxos_register_channels(oryxos_workspace, oryxos_inline_plugin):
    channel = types.SimpleNamespace(interactive=False)
    plugin = oryxos_inline_plugin(
        "chan", oryxos_register_channels=lambda register: register("bot", channel)
    )
    assert runtime_with(oryxos_workspace, plugin).channels.get("bot") is channel


def test_hook_oryxos_register_memory(oryxos_workspace, oryxos_inline_plugin):
    class Notes:
        def __init__(self, runtime):
            self.runtime = runtime

    plugin = oryxos_inline_plugin(
        "notes", oryxos_register_memory=lambda register: register("notes", Notes)
    )
    oryxos_workspace.config_file.write_text("memory:\n  backend: notes\n")
    runtime = runtime_with(oryxos_workspace, plugin)
    assert isinstance(runtime.memory, Notes) and runtime.memory.runtime is runtime


def test_hook_oryxos_register_storage(oryxos_workspace, oryxos_inline_plugin):
    opened = []

    def factory(url, workspace):
        opened.append((url, workspace))
        return types.SimpleNamespace(close=lambda: None)

    plugin = oryxos_inline_plugin(
        "memdb", oryxos_register_storage=lambda register: register("memdb", factory)
    )
    oryxos_workspace.config_file.write_text("storage:\n  backend: memdb\n  url: mem://\n")
    runtime = runtime_with(oryxos_workspace, plugin)
    runtime.storage
    assert opened == [("mem://", oryxos_workspace)]
    assert set(runtime.storage_backends.names()) >= {"memdb", "peewee"}


def test_hook_oryxos_register_notify_adapters(oryxos_workspace, oryxos_inline_plugin):
    adapter = object()
    plugin = oryxos_inline_plugin(
        "slack", oryxos_register_notify_adapters=lambda register: register("slack", adapter)
    )
    assert runtime_with(oryxos_workspace, plugin).notify_adapters.get("slack") is adapter


def test_hook_oryxos_register_commands(oryxos_cli, oryxos_inline_plugin):
    def add(cli):
        @cli.command()
        def ping():
            """Answer pong."""
            click.echo("pong")

    result = oryxos_cli.invoke(
        ["ping"], plugins=[oryxos_inline_plugin("pinger", oryxos_register_commands=add)]
    )
    assert result.exit_code == 0 and result.output == "pong\n"


def test_hook_oryxos_status(oryxos_workspace, oryxos_inline_plugin):
    from oryxos import StatusSection
    from oryxos.status import collect_sections

    def queues(runtime):
        assert runtime.workspace.path == oryxos_workspace.path
        return StatusSection("queues", "1 of 2 workers down", ok=False, items=[
            {"name": "q1", "state": "running"}, {"name": "q2", "state": "down"}])  # fmt: skip

    def broken(runtime):
        raise RuntimeError("cannot reach the broker")

    runtime = runtime_with(
        oryxos_workspace,
        oryxos_inline_plugin("queues", oryxos_status=queues),
        oryxos_inline_plugin("quiet", oryxos_status=lambda runtime: None),
        oryxos_inline_plugin("flaky", oryxos_status=broken),
    )
    sections = {s.name: s for s in collect_sections(runtime)}
    assert set(sections) == {"queues", "flaky"}  # None: nothing to show
    assert sections["queues"].items[1] == {"name": "q2", "state": "down"}
    assert not sections["queues"].ok
    # a plugin whose status fails does not break the report: its section says why
    assert sections["flaky"].summary == "status unavailable: cannot reach the broker"
    assert sections["flaky"].ok is False


def test_hook_oryxos_startup_and_oryxos_shutdown(oryxos_workspace, oryxos_inline_plugin):
    events = []
    plugin = oryxos_inline_plugin(
        "life",
        oryxos_startup=lambda runtime: events.append(("start", runtime)),
        oryxos_shutdown=lambda runtime: events.append(("stop", runtime)),
    )
    runtime = runtime_with(oryxos_workspace, plugin)
    runtime.startup()
    runtime.startup()  # once only
    runtime.close()
    runtime.close()
    assert events == [("start", runtime), ("stop", runtime)]


def test_a_registry_refuses_duplicates_naming_both_plugins(oryxos_workspace, oryxos_inline_plugin):
    from oryxos.errors import StartupError

    one = oryxos_inline_plugin("one", oryxos_register_providers=lambda register: register("p", 1))
    two = oryxos_inline_plugin("two", oryxos_register_providers=lambda register: register("p", 2))
    with pytest.raises(
        StartupError, match="provider 'p' is registered twice: by plugin one and by plugin two"
    ):
        runtime_with(oryxos_workspace, one, two).providers


def _echo_plugin(oryxos_inline_plugin, **hooks):
    def register(catalog):
        def echo(text: str) -> str:
            """Echo the text."""
            return text

        catalog.register(echo)

    return oryxos_inline_plugin("echoer", oryxos_register_tools=register, **hooks)


def test_hook_oryxos_before_tool_call(oryxos_workspace, oryxos_inline_plugin):
    from oryxos.storage import AuditQuery
    from oryxos.tools import ToolCall

    seen = []

    def veto(call, ctx):
        seen.append((call.name, call.arguments, ctx.agent))
        return (
            "echo of 'forbidden' is blocked by policy"
            if call.arguments["text"] == "forbidden"
            else None
        )

    runtime = runtime_with(
        oryxos_workspace, _echo_plugin(oryxos_inline_plugin, oryxos_before_tool_call=veto)
    )
    ctx = runtime.catalog.context(agent="a1")
    ok = runtime.executor.run(ToolCall("echo", {"text": "fine"}), ctx)
    refused = runtime.executor.run(ToolCall("echo", {"text": "forbidden"}), ctx)
    invalid = runtime.executor.run(ToolCall("echo", {}), ctx)  # schema fails first: no hook call
    assert ok.success and ok.content == "fine"
    assert not refused.success and not refused.retryable
    assert "blocked by policy" in refused.error_message
    assert not invalid.success and invalid.retryable
    assert seen == [("echo", {"text": "fine"}, "a1"), ("echo", {"text": "forbidden"}, "a1")]
    rows = runtime.storage.audit.tool_invocations(AuditQuery(tool_name="echo")).items
    assert [r.success for r in rows] == [False, False, True]  # newest first; refusals audited
    runtime.close()


def test_hook_oryxos_after_tool_call(oryxos_workspace, oryxos_inline_plugin):
    from oryxos.tools import ToolCall

    seen = []
    plugin = _echo_plugin(
        oryxos_inline_plugin,
        oryxos_after_tool_call=lambda call, result, ctx: seen.append(
            (call.name, result.success, result.content)
        ),
    )
    runtime = runtime_with(oryxos_workspace, plugin)
    ctx = runtime.catalog.context()
    runtime.executor.run(ToolCall("echo", {"text": "hi"}), ctx)
    runtime.executor.run(ToolCall("nope", {}), ctx)
    assert seen == [("echo", True, "hi"), ("nope", False, "")]
    runtime.close()
