"""Every hook OryxOS calls, grouped by area. Plugins implement them with ``@oryxos.hookimpl``.

Registration hooks (``oryxos_register_*``) receive a registry and call it; the registry checks
what it is given and raises a StartupError naming the plugin at fault (a duplicate name names
both plugins). Each registration hook is called once per runtime, when the capability is first
needed, and a plugin's implementation is told which plugin it is registering for through the
registry. docs/plugins.md has one section per hook, headed by its signature.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # imported for annotations only: importing this module stays cheap
    import click

    from oryxos.catalog import ToolCatalog, ToolContext
    from oryxos.config import Config
    from oryxos.registry import Registry
    from oryxos.runtime import Runtime
    from oryxos.status import StatusSection
    from oryxos.storage import LlmCallRecord
    from oryxos.tools import ToolCall, ToolResult

hookspec = pluggy.HookspecMarker("oryxos")


# --------------------------------------------------------------------------------------------
# Plugin manager
# --------------------------------------------------------------------------------------------


@hookspec(historic=True)
def oryxos_addhooks(pluginmanager: pluggy.PluginManager) -> None:
    """Add hookspecs of a plugin's own (e.g. the web plugin's routes hook).

    Called for every plugin as it is registered, before its other hooks are checked, so that
    other plugins may implement the new hooks. Call ``pluginmanager.add_hookspecs(module)``.
    """


# --------------------------------------------------------------------------------------------
# Registration: providers, tools, channels, memory, storage, notify adapters
# --------------------------------------------------------------------------------------------


@hookspec
def oryxos_register_providers(register: Registry[Any], config: Config) -> None:
    """Register LLM providers: ``register(name, provider)``.

    :param register: call it with a provider name (a key of ``providers:`` in config.yaml) and
        an object implementing :class:`oryxos.providers.Provider`.
    :param config: the validated configuration.
    Agents choose a provider by the name in their AGENT.md, never by type.
    """


@hookspec
def oryxos_register_tools(catalog: ToolCatalog, config: Config) -> None:
    """Register tools: ``catalog.register(name_or_tool, groups=..., available=..., builder=...)``.

    :param catalog: the runtime's ToolCatalog. A name registered twice is a StartupError that
        names both plugins. ``catalog.add_predicate(name, fn)`` adds a ToolContext predicate
        that availability rules may name.
    :param config: the validated configuration.
    """


@hookspec
def oryxos_register_channels(register: Registry[Any], config: Config) -> None:
    """Register channels (CLI, REST, IM bots): ``register(name, channel)``.

    A channel object has ``interactive: bool`` and, for ``oryxos gateway``, ``run(runtime,
    stop_event)`` which serves until the event is set.
    """


@hookspec
def oryxos_register_memory(register: Registry[Any], config: Config) -> None:
    """Register long-term memory back-ends: ``register(name, factory)``.

    ``factory(runtime)`` returns an object implementing :class:`oryxos.memory.Memory`;
    ``memory.backend`` in config.yaml chooses one by name.
    """


@hookspec
def oryxos_register_storage(register: Registry[Any], config: Config) -> None:
    """Register storage back-ends: ``register(name, factory)``.

    ``factory(url, workspace)`` returns an object implementing :class:`oryxos.storage.Storage`
    with its schema migrated; ``storage.backend`` in config.yaml chooses one by name.
    """


@hookspec
def oryxos_register_notify_adapters(register: Registry[Any]) -> None:
    """Register notify channel types: ``register(type_name, adapter)``.

    An adapter turns ``(channel record, content)`` into the vendor's request and reports
    delivery; the notify tool picks one by the channel's ``type``. It implements
    :class:`oryxos.notify.NotifyAdapter`: ``deliver(channel, content, *, secret, timeout) ->
    Delivery``; the kernel resolves the secret and retries a ``retryable`` failure once.
    """


@hookspec
def oryxos_register_commands(cli: click.Group) -> None:
    """Add click commands or groups to the ``oryxos`` command line: ``cli.add_command(cmd)``.

    Called while the CLI is built, before arguments are parsed: import nothing heavy here.
    """


# --------------------------------------------------------------------------------------------
# Lifecycle events
# --------------------------------------------------------------------------------------------


@hookspec
def oryxos_startup(runtime: Runtime) -> None:
    """The runtime is about to serve (chat, serve, gateway): open connections, start threads."""


@hookspec
def oryxos_status(runtime: Runtime) -> StatusSection | None:
    """This plugin's part of the status report (``oryxos status``, ``GET /api/v1/info``, the
    console's dashboard), or None when it has nothing to show.

    Must be cheap and must not start anything: report what is, e.g. servers not started in
    this process as not started. See :class:`oryxos.status.StatusSection`.
    """


@hookspec
def oryxos_shutdown(runtime: Runtime) -> None:
    """The runtime is stopping: close what :func:`oryxos_startup` opened. Must not raise.

    Called once by ``Runtime.close()`` when the runtime was started, or when its tool catalog
    was built (even if building it failed): registering tools may start things too, such as
    the MCP plugin's server processes.
    """


@hookspec(firstresult=True)
def oryxos_before_tool_call(call: ToolCall, ctx: ToolContext) -> str | None:
    """Veto a tool call that passed the sandbox and schema checks.

    Return a reason (str) to refuse the call — it is returned to the model as a non-retryable
    error and audited with success = false — or None to let it run. Stops at the first
    non-None result.
    """


@hookspec
def oryxos_after_tool_call(call: ToolCall, result: ToolResult, ctx: ToolContext) -> None:
    """A tool call finished (successfully, refused or failed); ``result`` is what the model sees."""


@hookspec
def oryxos_after_llm_call(record: LlmCallRecord) -> None:
    """A provider call finished (successfully or not); ``record`` is the audit row written."""
