"""The Runtime: built once from a workspace and a plugin manager; what hooks and commands use.

Everything is built lazily — the storage on first use of :attr:`Runtime.storage`, the tool
catalog on first use of :attr:`Runtime.catalog` — so that a command pays only for what it
touches (``oryxos plugins`` never opens the database).
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any

from oryxos.config import Config, load_config
from oryxos.errors import StartupError, StorageError
from oryxos.registry import Registry
from oryxos.workspace import Workspace

if TYPE_CHECKING:
    from oryxos.agents import AgentLoader
    from oryxos.catalog import ToolCatalog
    from oryxos.executor import ToolExecutor
    from oryxos.loop import ReActLoop
    from oryxos.memory import Memory
    from oryxos.notify import NotifyService
    from oryxos.plugins import PluginManager
    from oryxos.sandbox import SandboxChecker
    from oryxos.sessions import SessionManager
    from oryxos.storage import Storage


class Runtime:
    """One workspace's configuration, plugins and the registries they fill."""

    def __init__(self, workspace: Workspace, config: Config, pm: PluginManager):
        self.workspace = workspace
        self.config = config
        self.pm = pm
        self._lock = threading.RLock()
        self._started = False
        # Set once the catalog is (being) built: plugins may start things then (the MCP plugin
        # starts its servers), so close() must call oryxos_shutdown even without startup().
        self._needs_shutdown = False

    @classmethod
    def load(cls, workspace: Workspace, pm: PluginManager | None = None) -> Runtime:
        """Read the workspace's config and build a runtime (a plugin manager if none given)."""
        from oryxos.plugins import get_plugin_manager

        workspace.require()
        config = load_config(workspace.config_file)
        if pm is None:
            pm = get_plugin_manager(disabled=config.plugins.disabled)
        return cls(workspace, config, pm)

    # Registries filled by registration hooks --------------------------------------------------

    def _collect(self, hook: str, registry: Any, **kwargs: Any) -> Any:
        self.pm.call_each(hook, registry, config=self.config, **kwargs)
        return registry

    @cached_property
    def storage_backends(self) -> Registry[Any]:
        registry: Registry[Any] = Registry("storage backend")
        return self._collect("oryxos_register_storage", registry, register=registry)

    @cached_property
    def storage(self) -> Storage:
        """The configured storage back-end, connected and migrated."""
        with self._lock:
            # Threads that raced to the first use wait here; all but the first get its storage
            # (functools.cached_property has no lock of its own since Python 3.12).
            if "storage" in self.__dict__:
                return self.__dict__["storage"]  # type: ignore[no-any-return]
            name = self.config.storage.backend
            if name not in self.storage_backends:
                known = (
                    ", ".join(self.storage_backends.names())
                    or "none (is the storage plugin disabled?)"
                )
                raise StartupError(
                    f"{self.config.source or 'config'}: storage.backend: no storage plugin "
                    f"registered {name!r} (available: {known})"
                )
            factory = self.storage_backends.get(name)
            try:
                return factory(self.config.storage.url, self.workspace)
            except (StartupError, StorageError):
                raise
            except Exception as err:
                raise StorageError(
                    f"cannot open storage {self.config.storage.url!r}: {err}"
                ) from err

    @cached_property
    def catalog(self) -> ToolCatalog:
        """Every tool registered by plugins."""
        from oryxos.catalog import ToolCatalog

        catalog = ToolCatalog()
        self._needs_shutdown = True  # even if a plugin fails below, what others started stops
        return self._collect("oryxos_register_tools", catalog, catalog=catalog)

    @cached_property
    def agents(self) -> AgentLoader:
        """The workspace's agents (AGENT.md is read again on every load: edits apply at once)."""
        from oryxos.agents import AgentLoader

        return AgentLoader(self.workspace)

    @cached_property
    def sandbox(self) -> SandboxChecker:
        """The sandbox: config whitelists plus the runtime entries stored in the database."""
        from oryxos.sandbox import SandboxChecker

        return SandboxChecker(self.config, self.workspace, lambda: self.storage.whitelist)

    @cached_property
    def executor(self) -> ToolExecutor:
        """Runs tool calls: sandbox, validation, hooks, execution and audit."""
        from oryxos.executor import ToolExecutor

        return ToolExecutor(self)

    @cached_property
    def providers(self) -> Registry[Any]:
        registry: Registry[Any] = Registry("provider")
        return self._collect("oryxos_register_providers", registry, register=registry)

    @cached_property
    def memory_backends(self) -> Registry[Any]:
        registry: Registry[Any] = Registry("memory backend")
        return self._collect("oryxos_register_memory", registry, register=registry)

    @cached_property
    def memory(self) -> Memory | None:
        """The configured long-term memory, or None when no plugin provides it."""
        name = self.config.memory.backend
        if name not in self.memory_backends:
            return None
        return self.memory_backends.get(name)(self)

    @property
    def sessions(self) -> SessionManager:
        """Sessions of this runtime: lookup, storage and per-session turn locks.

        Built under the runtime's lock, not as a cached_property (which has no lock since
        Python 3.12): two threads racing on the first turn must share one manager, or each
        would lock sessions with its own locks.
        """
        with self._lock:
            if "_sessions" not in self.__dict__:
                from oryxos.sessions import SessionManager

                self._sessions = SessionManager(self)
            return self._sessions

    @property
    def loop(self) -> ReActLoop:
        """The ReAct loop that channels (CLI, REST, IM) run agent turns through (one, shared)."""
        with self._lock:
            if "_loop" not in self.__dict__:
                from oryxos.loop import ReActLoop

                self._loop = ReActLoop(self)
            return self._loop

    @cached_property
    def channels(self) -> Registry[Any]:
        registry: Registry[Any] = Registry("channel")
        return self._collect("oryxos_register_channels", registry, register=registry)

    @cached_property
    def notify_adapters(self) -> Registry[Any]:
        registry: Registry[Any] = Registry("notify channel type")
        self.pm.call_each("oryxos_register_notify_adapters", registry, register=registry)
        return registry

    # Lifecycle ------------------------------------------------------------------------------

    def startup(self) -> None:
        """Tell plugins the runtime is about to serve (once)."""
        with self._lock:
            if not self._started:
                self._started = True
                self.pm.hook.oryxos_startup(runtime=self)

    def close(self) -> None:
        """Tell plugins to stop and close the database; safe to call twice."""
        with self._lock:
            if self._started or self._needs_shutdown:
                self._started = self._needs_shutdown = False
                self.pm.hook.oryxos_shutdown(runtime=self)
            self.__dict__.pop("sandbox", None)  # it holds the storage's whitelist store
            storage = self.__dict__.pop("storage", None)
            if storage is not None:
                storage.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @cached_property
    def notify(self) -> NotifyService:
        """The notify channel registry and delivery (see oryxos.notify)."""
        from oryxos.notify import NotifyService

        return NotifyService(self)
