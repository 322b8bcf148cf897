"""One asyncio event loop for every MCP connection of a runtime, run by the threads that wait on it.

The mcp SDK (2.x) is async only; the kernel is synchronous and threaded. All MCP work of a
runtime lives on ONE event loop (:class:`SharedLoop`), but no thread owns it: a thread that
needs a result *drives* the loop itself (``run_until_complete``) until its result is there,
then lets go. A call from a synchronous tool therefore costs what ``await client.call_tool()``
costs on the SDK's own loop — no hand-over to a loop thread and back, which is two thread
wake-ups (≈ 0.1 ms a call on our benchmark machine, a 1.6× slowdown against a fast local
server; see docs/benchmarks.md).

Many threads may wait at once (one per session or API request). Leader/follower: the first
becomes the *driver*; the others *follow* — their tasks run on the loop the driver is running,
and they sleep until their own result is done or the driver lets go, when one of them takes
over. So a slow call never holds up a fast one, on the same server or another.

Work that nobody waits for (a server being stopped after it died, a cancelled request) is
handed to a *helper* thread, started on first need, that drives the loop until that work is
over — so no stopped server lingers until the next call. A thread that cannot drive (it runs
an asyncio loop of its own) is served by the helper too. Between calls nobody runs the loop:
what a server sends on its own (log notifications) is read with the next call.

Never hang: every wait has a deadline; the driver's ``run_until_complete`` returns at that
deadline even if the awaited task does not, and a waiting follower's sleep is bounded by it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

log = logging.getLogger("oryxos.mcp")

#: How long the helper drives for one piece of background work before it gives up on it.
BACKGROUND_WAIT_SECONDS = 30.0


class Job(concurrent.futures.Future):
    """A task on the shared loop, seen from any thread.

    Done only when the task is over: ``cancel()`` on it does nothing (the future is marked
    running at once); :meth:`SharedLoop.cancel` cancels the task, and the job then ends with
    ``CancelledError`` once the task has actually finished.
    """

    def __init__(self) -> None:
        super().__init__()
        self.set_running_or_notify_cancel()
        self.task: asyncio.Task[Any] | None = None
        self.cancel_requested = False


class SharedLoop:
    """An asyncio event loop that the threads waiting on it take turns to run."""

    def __init__(self, name: str = "oryxos-mcp") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._cond = threading.Condition()  # guards _driver, _background, _closed
        self._driver: int | None = None  # the thread running the loop now, if any
        #: work nobody waits for: the helper thread drives the loop until it is done
        self._background: list[concurrent.futures.Future[Any]] = []
        self._helper: threading.Thread | None = None
        self._closed = False

    # Submitting -----------------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._cond:
            if self._closed:
                raise RuntimeError("the MCP event loop is stopped")
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
            return self._loop

    def submit(self, fn: Callable[..., Awaitable[T]], *args: Any) -> Job:
        """Schedule ``fn(*args)`` as a task (it runs while some thread drives the loop)."""
        loop = self._ensure_loop()
        job = Job()

        def start() -> None:
            if job.cancel_requested:
                job.set_exception(concurrent.futures.CancelledError())
                return
            job.task = task = loop.create_task(fn(*args))  # type: ignore[arg-type]
            task.add_done_callback(lambda done: _settle(job, done))

        loop.call_soon_threadsafe(start)
        return job

    def cancel(self, job: Job) -> None:
        """Cancel a job's task; the helper drives the loop until the task has ended."""
        if job.done() or self._loop is None:
            return
        job.cancel_requested = True

        def cancel_task() -> None:
            if job.task is not None:
                job.task.cancel()

        try:
            self._loop.call_soon_threadsafe(cancel_task)
        except RuntimeError:  # the loop is closed: the task is gone with it
            return
        self.in_background(job)

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run a plain function on the loop (e.g. ``event.set``) at the next drive."""
        if self._loop is not None and not self._closed:
            self._loop.call_soon_threadsafe(fn, *args)

    def in_background(self, job: concurrent.futures.Future[Any]) -> None:
        """Have the helper thread drive the loop until ``job`` is done (nobody waits for it)."""
        if job.done():
            return
        with self._cond:
            if self._closed or job in self._background:
                return
            self._background.append(job)
            if self._helper is None or not self._helper.is_alive():
                self._helper = threading.Thread(
                    target=self._help, name=f"{self._name}-helper", daemon=True
                )
                self._helper.start()
            self._cond.notify_all()

    # Waiting --------------------------------------------------------------------------------

    def run(self, fn: Callable[..., Awaitable[T]], *args: Any, timeout: float) -> T:
        """Run ``fn(*args)`` and return its result; cancel it and raise TimeoutError after
        ``timeout`` seconds."""
        loop = self._ensure_loop()
        if _running_loop() is None:
            with self._cond:
                free = self._driver is None and not self._closed
                if free:
                    self._driver = threading.get_ident()
            if free:
                return self._run_here(loop, fn, args, timeout)
        job = self.submit(fn, *args)
        try:
            return self.wait(job, timeout)
        except TimeoutError:
            self.cancel(job)
            raise
        except BaseException:
            if not job.done():  # e.g. KeyboardInterrupt while driving: drop the request
                self.cancel(job)
            raise

    def _run_here(
        self,
        loop: asyncio.AbstractEventLoop,
        fn: Callable[..., Awaitable[T]],
        args: tuple[Any, ...],
        timeout: float,
    ) -> T:
        """The fast path of :meth:`run`, for a thread that got the driver role: the task is
        made and run right here (no self-pipe, two loop iterations for an instant result).
        Everything after taking the role is inside ``try``, so that even a KeyboardInterrupt
        anywhere in it gives the role back."""
        task: asyncio.Task[T] | None = None
        timer: asyncio.TimerHandle | None = None
        leftover: Job | None = None
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            loop.stop()

        try:
            task = loop.create_task(fn(*args))  # type: ignore[arg-type]
            timer = loop.call_later(timeout, expire)
            return loop.run_until_complete(task)
        except BaseException:
            if task is None or task.done():
                raise  # the call's own error (or nothing was started)
            # The deadline passed (the timer stopped the loop) or this thread was interrupted
            # (KeyboardInterrupt): cancel the task; the helper drives it to its end.
            task.cancel()
            leftover = Job()
            leftover.task = task
            task.add_done_callback(lambda done: _settle(leftover, done))  # type: ignore[arg-type]
            if expired:
                raise TimeoutError(f"no answer within {timeout:g} s") from None
            raise
        finally:
            if timer is not None:
                timer.cancel()
            with self._cond:
                self._driver = None
                self._cond.notify_all()
            if leftover is not None:
                self.in_background(leftover)

    def wait(self, job: concurrent.futures.Future[T], timeout: float) -> T:
        """Wait for ``job`` — driving the loop, or following the thread that does — at most
        ``timeout`` seconds (then TimeoutError; the job goes on). Returns its result."""
        deadline = time.monotonic() + max(timeout, 0.0)
        me = threading.get_ident()
        running = _running_loop()
        if running is not None and running is self._loop:
            raise RuntimeError("a blocking MCP wait from inside the MCP event loop")
        can_drive = running is None
        job.add_done_callback(self._wake_followers)
        while not job.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            with self._cond:
                if job.done():
                    break
                if self._closed or not can_drive or self._driver is not None:
                    if not can_drive:
                        self.in_background(job)
                    self._cond.wait(remaining)  # until our job is done or the driver lets go
                    continue
                self._driver = me
            try:
                self._drive(job, remaining)
            finally:
                with self._cond:
                    self._driver = None
                    self._cond.notify_all()  # a follower takes over if its job is not done
        if not job.done():
            raise TimeoutError(f"no answer within {timeout:g} s")
        return job.result()

    def _wake_followers(self, _job: Any) -> None:
        with self._cond:
            self._cond.notify_all()

    def _drive(self, job: concurrent.futures.Future[Any], remaining: float) -> None:
        """Run the loop on this thread until ``job`` is done or ``remaining`` seconds passed."""
        loop = self._loop
        assert loop is not None
        driver = threading.get_ident()
        waiter = loop.create_future()

        def release(_: Any = None) -> None:
            if not waiter.done():
                waiter.set_result(None)

        def wake(_: Any) -> None:
            if threading.get_ident() == driver and self._driver == driver:
                release()  # done by a task of this very drive: no self-pipe round trip
            else:
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(release)

        job.add_done_callback(wake)
        timer = loop.call_later(remaining, release)
        try:
            loop.run_until_complete(waiter)
        finally:
            timer.cancel()

    def _help(self) -> None:
        """The helper thread: drive the loop for background work until there is none."""
        while True:
            with self._cond:
                while not self._background and not self._closed:
                    self._cond.wait()
                if not self._background:
                    return
                job = self._background[0]
            try:
                self.wait(job, BACKGROUND_WAIT_SECONDS)
            except TimeoutError:
                log.warning("MCP: background work not over after %g s", BACKGROUND_WAIT_SECONDS)
            except BaseException:  # the work's own error: nobody's to report
                pass
            with self._cond:
                if job in self._background:
                    self._background.remove(job)

    # Stopping -------------------------------------------------------------------------------

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel every task still on the loop, wait for them, and close the loop."""
        if self._loop is None or self._closed:
            with self._cond:
                self._closed = True
                self._cond.notify_all()
            return
        try:
            self.wait(self.submit(_cancel_others), timeout)
        except BaseException as err:  # stopping goes on regardless
            log.warning("MCP: tasks left when stopping the event loop: %s", err)
        deadline = time.monotonic() + timeout
        with self._cond:
            self._closed = True
            self._background.clear()
            self._cond.notify_all()
            while self._driver is not None:  # a late waiter still driving: let it finish
                if not self._cond.wait(deadline - time.monotonic()):
                    log.warning("MCP: event loop still in use when stopping; not closed")
                    return
            loop = self._loop
        if self._helper is not None:
            self._helper.join(timeout)
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _settle(job: Job, task: asyncio.Task[Any]) -> None:
    """Copy a finished task's outcome to its job."""
    if task.cancelled():
        job.set_exception(concurrent.futures.CancelledError())
    elif task.exception() is not None:
        job.set_exception(task.exception())
    else:
        job.set_result(task.result())


async def _cancel_others() -> None:
    """Cancel every other task on this loop and wait for them to end."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    if others:
        await asyncio.wait(others)
