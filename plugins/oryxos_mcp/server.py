"""One configured MCP server: its process, its connection, its tools, and its restarts.

A :class:`McpServer` owns at most one live :class:`_Connection` (one subprocess spoken to over
stdio by the mcp SDK's ``Client``). The connection lives in one task on the shared event loop
(:mod:`oryxos_mcp.bridge`), because an anyio task group must be left by the task that entered
it; calls are separate tasks that use the connected client, run by the calling thread.

Never hang: the handshake and ``tools/list`` run under a deadline (``start_timeout_seconds``),
every call under two (the SDK's ``read_timeout_seconds``, and the calling thread's own wait on
the shared loop, a little longer). A server that dies or stops
answering is marked down, its process is stopped, and the call returns a *retryable* error; the
next call restarts it — at once the first time, then after a growing delay (backoff) while it
keeps failing. The server's stderr goes to the log, one record per line, and so do the log
messages it sends over MCP (``notifications/message``, at their level), on the logger
``oryxos.mcp.server.<name>``.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import json
import logging
import math
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oryxos.errors import OryxError
from oryxos_mcp.bridge import Job, SharedLoop
from oryxos_mcp.config import ServerSpec

log = logging.getLogger("oryxos.mcp")

#: Extra seconds the calling thread waits beyond the in-loop deadline before giving up on it.
OUTER_GRACE_SECONDS = 2.0
#: The calling thread's start deadline is the loop's plus this (the loop's own report of a
#: timeout comes only after the SDK has stopped the process, which takes seconds).
START_GRACE_SECONDS = 0.2
#: The SDK's stdio shutdown: 2 s for the server to leave after stdin closes, 2 s after SIGTERM.
STOP_WAIT_SECONDS = 8.0
#: MCP log levels (RFC 5424 names) → Python logging levels.
SERVER_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
#: JSON-RPC error codes with which the SDK reports a dead connection or an unanswered request.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001


class ServerUnavailable(OryxError):
    """The server could not be started, died, or does not answer (a retryable condition)."""


@dataclass(frozen=True)
class ToolInfo:
    """What ``tools/list`` said about one tool."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class Settings:
    """Timeouts and backoff (``mcp:`` in config.yaml)."""

    start_timeout_seconds: float = 30.0
    call_timeout_seconds: float = 60.0
    restart_backoff_seconds: float = 1.0
    restart_backoff_max_seconds: float = 60.0


@dataclass
class CallOutcome:
    """The result of one ``tools/call``: the SDK's result, or why there is none."""

    result: Any = None
    error: str | None = None
    server_down: bool = False


def describe_error(err: BaseException) -> str:
    """One line for an error, unwrapping the ExceptionGroups that anyio task groups raise."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    code = getattr(err, "code", None)
    if code == CONNECTION_CLOSED:
        return "the server closed the connection (it exited or crashed)"
    if isinstance(err, FileNotFoundError):
        return f"program not found: {err.filename or err}"
    if isinstance(err, PermissionError):
        return f"program not executable: {err.filename or err}"
    text = str(err) or type(err).__name__
    return text if code is not None else f"{type(err).__name__}: {text}"


def _mcp_error(err: BaseException) -> Any:
    """The MCPError inside ``err`` (possibly an ExceptionGroup), if any."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err if type(err).__name__ == "MCPError" else None


class _StderrPump:
    """A pipe whose write end is the server's stderr; a thread logs what arrives, line by line."""

    def __init__(self, server: str):
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._reader = os.fdopen(read_fd, "rb")
        self._log = logging.getLogger(f"oryxos.mcp.server.{server}")
        self._server = server
        self.tail: collections.deque[str] = collections.deque(maxlen=3)
        self._thread = threading.Thread(target=self._pump, name=f"mcp-stderr-{server}", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        with self._reader:
            for raw in self._reader:
                line = raw.decode("utf-8", errors="replace").rstrip()
                if line:
                    self.tail.append(line[:300])
                    self._log.info("[%s] %s", self._server, line)

    def last_lines(self, wait: float = 0.5) -> str:
        """The last lines the server wrote (waiting a little for them after it exited)."""
        from oryxos.secrets import mask

        self._thread.join(wait)
        return mask(" | ".join(self.tail))

    def close_writer(self) -> None:
        """Close our copy of the write end (the child keeps its own until it exits)."""
        if not self.writer.closed:
            self.writer.close()


class _Connection:
    """One subprocess and the SDK client connected to it; lives in one task on the loop."""

    def __init__(
        self, spec: ServerSpec, env: dict[str, str], cwd: Path | None, s: Settings, loop: SharedLoop
    ):
        self.spec, self.env, self.cwd, self.settings, self.loop = spec, env, cwd, s, loop
        self.started: concurrent.futures.Future[list[ToolInfo]] = concurrent.futures.Future()
        self.client: Any = None
        self.pump: _StderrPump | None = None
        self.closed = False
        self.task: Job | None = None
        self._stop_event: Any = None

    async def run(self) -> None:
        import anyio
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self._stop_event = anyio.Event()
        self.pump = pump = _StderrPump(self.spec.name)
        params = StdioServerParameters(
            command=self.spec.argv[0],
            args=list(self.spec.argv[1:]),
            env=self.env,
            cwd=str(self.cwd) if self.cwd else None,
        )
        timeout = self.settings.start_timeout_seconds
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                client = Client(
                    stdio_client(params, errlog=pump.writer),
                    read_timeout_seconds=timeout,
                    mode="legacy",  # "auto" first probes server/discover with a fixed 10 s wait
                    cache=None,
                    logging_callback=self._server_log,
                )
                async with client:
                    pump.close_writer()
                    tools = await _list_all_tools(client)
                    scope.deadline = math.inf  # started: from now on only stop() ends it
                    self.client = client
                    self.started.set_result(tools)
                    await self._stop_event.wait()
            if scope.cancelled_caught and not self.started.done():
                self.started.set_exception(
                    TimeoutError(f"no answer to initialize/tools/list within {timeout:g} s")
                )
        except Exception as err:
            if not self.started.done():
                self.started.set_exception(err)
            else:
                log.info("MCP server %r: connection ended: %s", self.spec.name, describe_error(err))
        finally:
            pump.close_writer()
            self.client = None
            self.closed = True
            if not self.started.done():  # cancelled (the loop is stopping)
                self.started.set_exception(ServerUnavailable("stopped while starting"))

    async def _server_log(self, params: Any) -> None:
        """A log message the server sent (``notifications/message``) → the server's logger."""
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        source = f"{self.spec.name}/{params.logger}" if params.logger else self.spec.name
        level = SERVER_LOG_LEVELS.get(str(params.level), logging.INFO)
        logging.getLogger(f"oryxos.mcp.server.{self.spec.name}").log(
            level, "[%s] %s", source, text[:2000]
        )

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float) -> Any:
        """``tools/call``; the SDK ends it after ``timeout`` s (an MCPError REQUEST_TIMEOUT).

        No cancel scope of ours around it: the SDK already waits in one, and the caller's
        own deadline (:meth:`McpServer.call`) covers a request that would not even get there.
        """
        client = self.client
        if client is None or self.closed:
            raise ServerUnavailable("the connection is closed")
        return await client.call_tool(name, arguments, read_timeout_seconds=timeout)

    def request_stop(self) -> None:
        """Ask the connection to end (stops the process); does not wait.

        The loop's helper thread drives the shutdown if nobody waits for it
        (:meth:`wait_stopped`), so the process goes at once, not with the next call.
        """
        if self.closed or self.task is None:
            return
        if self.started.done() and self._stop_event is not None:
            self.loop.call_soon(self._stop_event.set)
            self.loop.in_background(self.task)
        else:
            self.loop.cancel(self.task)  # still starting: cancel; the SDK's shutdown is shielded

    def wait_stopped(self, timeout: float) -> None:
        if self.task is not None:
            # Cancelled or failed: either way it is over (or abandoned after the timeout).
            with contextlib.suppress(BaseException):
                self.loop.wait(self.task, timeout)


async def _list_all_tools(client: Any) -> list[ToolInfo]:
    tools: list[ToolInfo] = []
    cursor = None
    for _ in range(100):  # a server that pages forever must not hold us
        page = await client.list_tools(cursor=cursor)
        tools += [
            ToolInfo(t.name, t.description or "", dict(t.input_schema or {"type": "object"}))
            for t in page.tools
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


@dataclass
class McpServer:
    """A configured server: state, tools, and the calls that go to it."""

    spec: ServerSpec
    loop: SharedLoop
    settings: Settings = field(default_factory=Settings)
    cwd: Path | None = None
    state: str = "stopped"  # stopped | starting | running | down | failed
    error: str | None = None
    tools: list[ToolInfo] = field(default_factory=list)
    restarts: int = 0
    closed: bool = False  # set when the runtime stops: no restart after that
    _conn: _Connection | None = field(default=None, repr=False)
    _failures: int = field(default=0, repr=False)
    _next_attempt: float = field(default=0.0, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def name(self) -> str:
        return self.spec.name

    # Starting -------------------------------------------------------------------------------

    def launch(self) -> _Connection | None:
        """Begin starting the server (returns at once); :meth:`finish_start` waits for it.

        Split in two so that the manager starts every server before waiting for any.
        """
        with self._lock:
            self.state, self.error = "starting", None
            try:
                env = self.spec.resolve_env()
            except OryxError as err:
                self.state, self.error = "failed", str(err)
                return None
            conn = _Connection(self.spec, env, self.cwd, self.settings, self.loop)
            conn.task = self.loop.submit(conn.run)
            self._conn = conn
            return conn

    def finish_start(self, conn: _Connection | None, timeout: float | None = None) -> None:
        """Wait for a launched connection; raise ServerUnavailable if it did not come up."""
        if timeout is None:
            timeout = self.settings.start_timeout_seconds + START_GRACE_SECONDS
        with self._lock:
            if conn is None:
                raise ServerUnavailable(self.error or "not started")
            try:
                tools = self.loop.wait(conn.started, timeout)
            except TimeoutError:
                conn.request_stop()
                self._failed(f"no answer within {self.settings.start_timeout_seconds:g} s at start")
            except BaseException as err:
                conn.request_stop()
                stderr = conn.pump.last_lines() if conn.pump is not None else ""
                self._failed(
                    f"could not start: {describe_error(err)}"
                    + (f"; its stderr: {stderr}" if stderr else "")
                )
            else:
                self.state, self.error, self.tools = "running", None, tools
                log.info("MCP server %r started: %d tool(s)", self.name, len(tools))

    def _failed(self, reason: str) -> None:
        self.state, self.error = "failed", reason
        self._conn = None
        raise ServerUnavailable(f"MCP server {self.name!r} {reason}")

    def start(self) -> None:
        """Start and wait (one server); raise ServerUnavailable on failure."""
        self.finish_start(self.launch())

    # Calling --------------------------------------------------------------------------------

    def _backoff(self) -> float:
        if self._failures <= 1:
            return 0.0  # the first restart after a failure is immediate
        delay = self.settings.restart_backoff_seconds * 2 ** (self._failures - 2)
        return min(delay, self.settings.restart_backoff_max_seconds)

    def _connection(self) -> _Connection:
        """The live connection, restarting a dead server when its backoff allows."""
        with self._lock:
            conn = self._conn
            if self.state == "running" and conn is not None and not conn.closed:
                return conn
            if self.closed:
                raise ServerUnavailable(f"MCP server {self.name!r} is stopped (OryxOS is stopping)")
            wait = self._next_attempt - time.monotonic()
            if wait > 0:
                raise ServerUnavailable(
                    f"MCP server {self.name!r} is down ({self.error}); "
                    f"next restart attempt in {math.ceil(wait)} s"
                )
            previous = self.error
            try:
                self.start()
            except ServerUnavailable as err:
                self._failures += 1
                self._next_attempt = time.monotonic() + self._backoff()
                raise ServerUnavailable(f"{err} (restart after: {previous})") from None
            self.restarts += 1
            log.warning("MCP server %r restarted (after: %s)", self.name, previous)
            return self._conn  # type: ignore[return-value]

    def _mark_down(self, conn: _Connection, reason: str) -> None:
        with self._lock:
            if self._conn is conn:
                self.state, self.error = "down", reason
                self._conn = None
                self._failures += 1
                self._next_attempt = time.monotonic() + self._backoff()
                log.warning("MCP server %r is down: %s; restarted on next use", self.name, reason)
        conn.request_stop()

    def call(self, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        """Call one tool; never raises, never waits longer than the call timeout (+ grace)."""
        try:
            conn = self._connection()
        except ServerUnavailable as err:
            return CallOutcome(error=str(err), server_down=True)
        timeout = self.settings.call_timeout_seconds
        try:
            result = self.loop.run(
                conn.call_tool, tool, arguments, timeout, timeout=timeout + OUTER_GRACE_SECONDS
            )
        except TimeoutError:  # the request is cancelled by run()
            return self._down(conn, f"no answer within {timeout:g} s")
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            return self._down(conn, "the call was cancelled")  # only the runtime stopping does
        except ServerUnavailable as err:
            return self._down(conn, str(err))
        except Exception as err:
            mcp_err = _mcp_error(err)
            if mcp_err is not None and mcp_err.code == REQUEST_TIMEOUT:
                return self._down(conn, f"no answer within {timeout:g} s")
            if mcp_err is not None and mcp_err.code == CONNECTION_CLOSED:
                return self._down(conn, describe_error(err))
            if mcp_err is not None:
                return CallOutcome(error=f"MCP server {self.name!r}: {mcp_err.message}")
            return CallOutcome(error=f"MCP server {self.name!r}: {describe_error(err)}")
        with self._lock:
            self._failures = 0
        return CallOutcome(result=result)

    def _down(self, conn: _Connection, reason: str) -> CallOutcome:
        if self.closed:  # the runtime stopped the server under the call: not a server failure
            return CallOutcome(
                error=f"MCP server {self.name!r}: the call ended because OryxOS is stopping",
                server_down=True,
            )
        self._mark_down(conn, reason)
        return CallOutcome(
            error=f"MCP server {self.name!r} failed: {reason}; it is restarted on the next call",
            server_down=True,
        )

    # Stopping -------------------------------------------------------------------------------

    def request_stop(self) -> _Connection | None:
        with self._lock:
            conn, self._conn = self._conn, None
            if self.state in ("running", "starting", "down"):
                self.state = "stopped"
        if conn is not None:
            conn.request_stop()
        return conn

    def stop(self, timeout: float = STOP_WAIT_SECONDS) -> None:
        conn = self.request_stop()
        if conn is not None:
            conn.wait_stopped(timeout)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": "stdio",
            "program": self.spec.argv[0],
            "state": self.state,
            "tools": len(self.tools) if self.state == "running" else None,
            "restarts": self.restarts,
            "error": self.error,
        }
