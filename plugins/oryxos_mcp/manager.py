"""The servers of one runtime: started together, registered in the catalog, stopped together.

Decision (documented in docs/mcp.md): the catalog needs tool *names* when it is built, so
building the catalog (``Runtime.catalog``, first needed by a chat, a server or ``oryxos tool``)
starts every configured server — in parallel, so start-up costs the slowest server, not the
sum — and keeps them running. Commands that never touch the catalog start nothing. A server
that fails to start is logged and reported by ``oryxos mcp list``; its tools are missing until
the next start, and the other servers work.

One manager per runtime configuration, found with :func:`manager_for`. It is closed by the
``oryxos_shutdown`` hook, by the commands that made it, and — for anything left — at exit
(``atexit``), so no server process outlives the runtime.
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxos.errors import NotFoundError, OryxError, StartupError
from oryxos_mcp.bridge import SharedLoop
from oryxos_mcp.config import ServersConfig, load_servers
from oryxos_mcp.server import START_GRACE_SECONDS, McpServer, ServerUnavailable, Settings

if TYPE_CHECKING:
    from oryxos.catalog import ToolCatalog
    from oryxos.config import Config

log = logging.getLogger("oryxos.mcp")

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what providers accept as a function name


class McpManager:
    """Every MCP server of one workspace."""

    def __init__(self, servers: ServersConfig, settings: Settings, cwd: Path | None = None):
        self.file = servers.file
        self.config = servers
        self.settings = settings
        self.loop = SharedLoop()
        self.servers = {
            spec.name: McpServer(spec, self.loop, settings, cwd) for spec in servers.servers
        }
        self.skipped = dict(servers.skipped)
        self.start_seconds: float | None = None
        self._started = False
        self._closed = False
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> McpManager:
        """The manager for the workspace whose config.yaml this is (no servers if none)."""
        mcp = getattr(config, "mcp", None)
        settings = Settings(
            start_timeout_seconds=getattr(mcp, "start_timeout_seconds", 30.0),
            call_timeout_seconds=getattr(mcp, "call_timeout_seconds", 60.0),
            restart_backoff_seconds=getattr(mcp, "restart_backoff_seconds", 1.0),
            restart_backoff_max_seconds=getattr(mcp, "restart_backoff_max_seconds", 60.0),
        )
        if not config.source:
            return cls(ServersConfig(file="<none>"), settings)
        state_dir = Path(config.source).parent
        return cls(load_servers(state_dir / "mcp_servers.yaml"), settings, state_dir.parent)

    def server(self, name: str) -> McpServer:
        """A configured stdio server by name, or a NotFoundError listing them."""
        try:
            return self.servers[name]
        except KeyError:
            known = ", ".join(sorted(self.servers)) or "none configured"
            extra = ""
            if name in self.skipped:
                extra = f" ({name!r} is skipped: transport {self.skipped[name]})"
            raise NotFoundError(
                f"no MCP server {name!r} in {self.file}{extra} (known: {known})"
            ) from None

    # Starting -------------------------------------------------------------------------------

    def start_all(self) -> None:
        """Start every server in parallel (once); failures are logged, not raised."""
        with self._lock:
            if self._started:
                return
            self._started = True
            for warning in self.config.warnings:
                log.warning("%s", warning)
            self._start(list(self.servers.values()))

    def start_one(self, name: str) -> McpServer:
        """Start one server (if not running) and return it; ServerUnavailable if it fails."""
        server = self.server(name)
        with self._lock:
            if server.state != "running":
                server.start()
        return server

    def _start(self, servers: list[McpServer]) -> None:
        begun = time.monotonic()
        launched = [(server, server.launch()) for server in servers]
        deadline = begun + self.settings.start_timeout_seconds + START_GRACE_SECONDS
        for server, conn in launched:
            try:
                server.finish_start(conn, timeout=deadline - time.monotonic())
            except ServerUnavailable as err:
                log.error("%s (its tools are not available)", err)
        self.start_seconds = time.monotonic() - begun

    # Registering ----------------------------------------------------------------------------

    def register(self, catalog: ToolCatalog) -> int:
        """Register a proxy tool per tool of every running server; return how many.

        A name that is already in the catalog is a StartupError naming both sources (the
        catalog's message, with this server as one of them); the servers are stopped first.
        """
        from oryxos_mcp.proxy import McpProxyTool

        registering = catalog.current_plugin
        count = 0
        try:
            for server in self.servers.values():
                if server.state != "running":
                    continue
                catalog.current_plugin = f"MCP server {server.name!r} ({self.file})"
                for info in server.tools:
                    if not TOOL_NAME.match(info.name):
                        log.warning(
                            "MCP server %r: tool %r skipped: a tool name must be 1-64 letters, "
                            "digits, '_' or '-' for the model providers",
                            server.name,
                            info.name,
                        )
                        continue
                    catalog.register(McpProxyTool(server, info), groups=(f"mcp:{server.name}",))
                    count += 1
        except StartupError:
            self.close()
            raise
        finally:
            catalog.current_plugin = registering
        return count

    # Reporting and stopping -----------------------------------------------------------------

    def report(self) -> list[dict[str, Any]]:
        """One row per configured entry (stdio servers and skipped ones), in file order."""
        rows = [server.as_dict() for server in self.servers.values()]
        rows += [
            {
                "name": name,
                "transport": transport,
                "program": None,
                "state": "skipped",
                "tools": None,
                "restarts": 0,
                "error": f"transport {transport!r} is not supported yet (stdio only)",
            }
            for name, transport in self.skipped.items()
        ]
        return rows

    def close(self) -> None:
        """Stop every server (in parallel) and the event loop; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for server in self.servers.values():
            server.closed = True  # a late call must not start a process nobody will stop
        pending = [server.request_stop() for server in self.servers.values()]
        for conn in pending:
            if conn is not None:
                conn.wait_stopped(8.0)
        self.loop.stop()


# One manager per runtime configuration --------------------------------------------------------

_managers: dict[int, tuple[Any, McpManager]] = {}
_managers_lock = threading.Lock()
_atexit_registered = False


def manager_for(config: Config) -> McpManager:
    """The manager of this configuration (made, not started, on first use)."""
    global _atexit_registered
    with _managers_lock:
        entry = _managers.get(id(config))
        if entry is not None and entry[0] is config:
            return entry[1]
        manager = McpManager.from_config(config)
        _managers[id(config)] = (config, manager)  # holding config keeps its id unique
        if not _atexit_registered:
            atexit.register(close_all)
            _atexit_registered = True
        return manager


def existing_manager(config: Config) -> McpManager | None:
    """The manager of this configuration if one was made in this process (none is made)."""
    with _managers_lock:
        entry = _managers.get(id(config))
    return entry[1] if entry is not None and entry[0] is config else None


def status_section(config: Config) -> Any:
    """The ``oryxos_status`` section: each server's state, or what is configured if the
    servers were not started in this process (nothing is started here)."""
    from oryxos.status import StatusSection

    manager = existing_manager(config)
    started = manager is not None and manager._started
    if manager is None:
        try:
            manager = McpManager.from_config(config)
        except OryxError as err:
            return StatusSection("mcp", str(err), ok=False)
    rows = manager.report()
    if not rows:
        return None
    states: dict[str, int] = {}
    for row in rows:
        if not started and row["state"] == "stopped":
            row["state"] = "not started"
        states[row["state"]] = states.get(row["state"], 0) + 1
    counted = ", ".join(f"{n} {state}" for state, n in states.items())
    summary = f"{len(rows)} server(s) in {manager.file}: {counted}"
    if not started:
        summary += " (they start with the tool catalog: a chat, oryxos serve, oryxos mcp list)"
    failed = states.get("failed", 0) + states.get("down", 0)
    return StatusSection("mcp", summary, ok=not failed, items=rows)


def close_manager(config: Config) -> None:
    """Stop the servers of this configuration, if a manager was made for it."""
    with _managers_lock:
        entry = _managers.pop(id(config), None)
    if entry is not None and entry[0] is config:
        entry[1].close()


def close_all() -> None:
    """Stop every server of every manager (the ``atexit`` handler)."""
    with _managers_lock:
        entries = list(_managers.values())
        _managers.clear()
    for _, manager in entries:
        try:
            manager.close()
        except Exception:  # pragma: no cover - at exit, keep stopping the others
            log.exception("stopping MCP servers failed")
