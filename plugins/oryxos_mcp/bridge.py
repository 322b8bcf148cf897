"""One event-loop thread that the synchronous kernel uses to talk to every MCP server.

The mcp SDK (2.x) is async only; the kernel is synchronous and threaded. All MCP work of a
runtime runs on ONE daemon thread with an anyio event loop and a :class:`BlockingPortal`:
callers submit coroutines and wait on a ``concurrent.futures.Future`` with a deadline, so a
server that never answers cannot hang a caller even if the loop itself were stuck.

The thread is a daemon on purpose: ``anyio.from_thread.start_blocking_portal`` runs its loop in
a ``ThreadPoolExecutor`` worker, and ``concurrent.futures`` joins those workers *before*
``atexit`` handlers run, so a process that forgot to stop the portal would hang on exit. With a
daemon thread the process exits and our ``atexit`` handler still gets to stop the servers.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An anyio event loop on a daemon thread, reached through a blocking portal."""

    def __init__(self, name: str = "oryxos-mcp") -> None:
        self._name = name
        self._portal: Any = None
        self._asyncio_loop: Any = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread (once); returns when the portal accepts work."""
        with self._lock:
            if self.running:
                return
            ready = threading.Event()
            failure: list[BaseException] = []

            def run() -> None:
                import anyio
                from anyio.from_thread import BlockingPortal

                async def main() -> None:
                    import asyncio

                    self._asyncio_loop = asyncio.get_running_loop()
                    async with BlockingPortal() as portal:
                        self._portal = portal
                        ready.set()
                        await portal.sleep_until_stopped()

                try:
                    anyio.run(main)
                except BaseException as err:  # pragma: no cover - reported to start()
                    failure.append(err)
                    ready.set()

            self._thread = threading.Thread(target=run, name=self._name, daemon=True)
            self._thread.start()
            ready.wait()
            if failure:  # pragma: no cover
                raise RuntimeError(f"the MCP event loop did not start: {failure[0]}")

    def submit(self, fn: Callable[..., Awaitable[T]], *args: Any) -> concurrent.futures.Future[T]:
        """Run ``fn(*args)`` as a task on the loop; wait on the returned future."""
        if not self.running:
            self.start()
        return self._portal.start_task_soon(fn, *args)

    def submit_call(
        self, fn: Callable[..., Awaitable[T]], *args: Any
    ) -> concurrent.futures.Future[T]:
        """Like :meth:`submit`, for short calls: a plain asyncio task, no portal bookkeeping.

        ``asyncio.run_coroutine_threadsafe`` costs about half of what the portal's task
        spawning does, which matters for a sub-millisecond tool call (bench/mcp_call.py). The
        loop runs anyio on its asyncio backend, so anyio code (``fail_after``, the SDK) works
        in such a task; cancelling the future cancels the task.
        """
        import asyncio

        if not self.running:
            self.start()
        return asyncio.run_coroutine_threadsafe(fn(*args), self._asyncio_loop)

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` on the loop and wait at most ``timeout`` seconds for it.

        On timeout the task is cancelled and ``TimeoutError`` is raised.
        """
        future = self.submit(fn, *args)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run a plain function on the loop thread (e.g. ``event.set``) without waiting."""
        if self.running:
            self._portal.start_task_soon(_as_async(fn), *args)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop (cancelling what still runs on it) and join the thread."""
        with self._lock:
            thread, portal = self._thread, self._portal
            self._thread, self._portal = None, None
        if thread is None or portal is None:
            return
        # If this fails the portal is stopping anyway (its own task is cancelled too).
        with contextlib.suppress(Exception):
            portal.start_task_soon(portal.stop, True).result(timeout)
        thread.join(timeout)


def _as_async(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def wrapper(*args: Any) -> Any:
        return fn(*args)

    return wrapper
