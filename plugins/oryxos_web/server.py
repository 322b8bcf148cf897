"""Serving the application with waitress, and stopping gracefully.

On SIGTERM or SIGINT the server stops accepting connections at once, lets the requests in
flight (agent turns that may be waiting on a model) finish within a deadline, then stops the
channel threads and closes the runtime. Each waitress thread serves one request at a time, so
``threads`` bounds the number of turns that run together.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("oryxos.web.server")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server reachable from this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class InFlight:
    """A WSGI wrapper that counts the requests being handled."""

    def __init__(self, app: Any):
        self.app = app
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        environ["oryxos.started"] = time.perf_counter()  # for the access log's duration
        with self._lock:
            self.count += 1
        try:
            # Flask builds a whole body before returning: such a request is done here. A
            # streamed body (Server-Sent Events) is still being written after this returns;
            # waitress's own state covers it when stopping (``_pending_output``).
            return self.app(environ, start_response)
        finally:
            with self._lock:
                self.count -= 1


@dataclass
class Server:
    """A waitress server for one application, with channel threads beside it."""

    app: Any
    host: str
    port: int
    threads: int
    deadline: float = 30.0
    channels: list[tuple[str, Any]] = field(default_factory=list)
    runtime: Any = None
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        from waitress import create_server

        self.counter = InFlight(self.app)
        self.waitress = create_server(
            self.counter,
            host=self.host,
            port=self.port,
            threads=self.threads,
            ident="oryxos",
            clear_untrusted_proxy_headers=True,
            # poll(), not select(): select() fails past file descriptor 1024 (~500 turns, each
            # holding a client connection and a connection to the model)
            asyncore_use_poll=True,
            connection_limit=max(100, self.threads * 2),
            channel_timeout=max(120, int(self.deadline) + 30),
        )
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        host = self.waitress.effective_host
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{self.waitress.effective_port}"

    def _start_channels(self) -> None:
        for name, channel in self.channels:

            def run(name: str = name, channel: Any = channel) -> None:
                try:
                    channel.run(self.runtime, self.stop_event)
                except Exception:
                    log.error("channel %s stopped with an error", name, exc_info=True)

            thread = threading.Thread(target=run, name=f"oryxos-channel-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
            log.info("channel %s started", name)

    def serve(self, install_signals: bool = True) -> None:
        """Serve until SIGTERM/SIGINT (or :meth:`stop` from another thread)."""
        previous = {}
        if install_signals:

            def on_signal(signum: int, frame: Any) -> None:
                # no exception here: it could surface anywhere in the main thread
                self.stop()

            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, on_signal)
        try:
            self._start_channels()
            self._loop_until_stopped()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._shutdown()

    def stop(self) -> None:
        """Ask :meth:`serve` to stop (thread-safe)."""
        self.stop_event.set()
        self.waitress.pull_trigger()

    def _loop_until_stopped(self) -> None:
        from waitress import wasyncore

        adj = self.waitress.adj
        while not self.stop_event.is_set():
            wasyncore.loop(
                timeout=adj.asyncore_loop_timeout,
                map=self.waitress._map,
                use_poll=adj.asyncore_use_poll,
                count=1,
            )

    def _shutdown(self) -> None:
        from waitress import wasyncore

        self.stop_event.set()
        server = self.waitress
        # 1. no new connections
        server.accepting = False
        server.del_channel()
        server.socket.close()
        # 2. let requests in flight finish (and their responses be written) before the deadline
        until = time.monotonic() + self.deadline
        waiting = self.counter.count
        if waiting:
            log.info("stopping: waiting up to %.0f s for %d request(s)", self.deadline, waiting)
        while time.monotonic() < until and (self.counter.count or _pending_output(server)):
            wasyncore.loop(
                timeout=0.05, map=server._map, use_poll=server.adj.asyncore_use_poll, count=1
            )
        if self.counter.count:
            log.warning("stopping with %d request(s) unfinished", self.counter.count)
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=1)
        for channel in [*server._map.values(), server.trigger]:
            with contextlib.suppress(Exception):  # best effort while stopping
                channel.close()
        # 3. channel plugins get the rest of the deadline
        for thread in self._threads:
            thread.join(max(0.1, until - time.monotonic()))
            if thread.is_alive():
                log.warning("channel thread %s did not stop in time", thread.name)
        log.info("stopped")


def _pending_output(server: Any) -> bool:
    """Whether a connection still has a response to write."""
    for channel in list(server._map.values()):
        if getattr(channel, "total_outbufs_len", 0) or getattr(channel, "requests", None):
            return True
    return False
