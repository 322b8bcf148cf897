"""The shared event loop that the waiting threads drive themselves (oryxos_mcp.bridge).

Plain coroutines here; the real servers exercise the same loop in test_mcp_servers.py.
"""

from __future__ import annotations

import _thread
import asyncio
import threading
import time

import pytest
from oryxos_mcp.bridge import SharedLoop


@pytest.fixture
def shared():
    loop = SharedLoop(name="test-mcp")
    yield loop
    loop.stop()


async def value(x):
    return x


async def wait_for_flag(flag: threading.Event, result, ended: list | None = None):
    try:
        while not flag.is_set():
            await asyncio.sleep(0.005)
        return result
    finally:
        if ended is not None:
            ended.append(result)


def test_run_returns_the_result_and_raises_the_coroutines_own_error(shared):
    assert shared.run(value, 42, timeout=5) == 42

    async def broken():
        raise RuntimeError("the call's own error")

    with pytest.raises(RuntimeError, match="the call's own error"):  # not taken for a timeout
        shared.run(broken, timeout=5)
    assert shared.run(value, "again", timeout=5) == "again"


def test_a_timeout_cancels_the_task_and_the_helper_finishes_it_without_another_call(shared):
    ended: list = []
    never = threading.Event()
    began = time.monotonic()
    with pytest.raises(TimeoutError, match="no answer within 0.3 s"):
        shared.run(wait_for_flag, never, "late", ended, timeout=0.3)
    assert time.monotonic() - began < 3
    # nobody calls again: the helper thread drives the cancellation to its end
    deadline = time.monotonic() + 5
    while not ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ended == ["late"], "the cancelled task did not end"


def test_a_slow_call_does_not_hold_up_other_threads(shared):
    """Thread A drives the loop for a long call; thread B's calls run on A's drive meanwhile."""
    release = threading.Event()
    outcome: dict = {}

    def slow() -> None:
        outcome["slow"] = shared.run(wait_for_flag, release, "slow", timeout=10)

    a = threading.Thread(target=slow)
    a.start()
    time.sleep(0.1)  # A is driving now
    quick = [shared.run(value, i, timeout=5) for i in range(20)]  # would time out if serialised
    assert quick == list(range(20))
    assert "slow" not in outcome
    release.set()
    a.join(10)
    assert outcome["slow"] == "slow"


def test_a_follower_takes_over_when_the_driver_leaves(shared):
    first, second = threading.Event(), threading.Event()
    results: dict = {}

    def call(name, flag):
        results[name] = shared.run(wait_for_flag, flag, name, timeout=10)

    a = threading.Thread(target=call, args=("a", first))
    a.start()
    time.sleep(0.1)  # A drives
    b = threading.Thread(target=call, args=("b", second))
    b.start()
    time.sleep(0.1)  # B follows
    first.set()
    a.join(5)
    assert results == {"a": "a"}
    second.set()  # nobody drives for B unless B took over
    b.join(5)
    assert results == {"a": "a", "b": "b"}


def test_many_threads_at_once_each_get_their_own_result(shared):
    failures: list = []

    async def echo(n, i):
        await asyncio.sleep(0)
        return (n, i)

    def worker(n):
        for i in range(200):
            got = shared.run(echo, n, i, timeout=10)
            if got != (n, i):
                failures.append((n, i, got))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == [] and not any(t.is_alive() for t in threads)


def test_a_caller_inside_its_own_asyncio_loop_is_served_by_the_helper(shared):
    async def main():
        return shared.run(value, "from inside asyncio.run", timeout=5)

    assert asyncio.run(main()) == "from inside asyncio.run"


def test_a_blocking_wait_from_inside_the_shared_loop_is_refused_not_a_deadlock(shared):
    async def reentrant():
        shared.run(value, 1, timeout=1)

    with pytest.raises(RuntimeError, match="from inside the MCP event loop"):
        shared.run(reentrant, timeout=5)


def test_ctrl_c_while_driving_drops_the_call_and_the_loop_keeps_working(shared):
    assert threading.current_thread() is threading.main_thread()
    ended: list = []
    never = threading.Event()
    threading.Timer(0.2, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        shared.run(wait_for_flag, never, "interrupted", ended, timeout=10)
    deadline = time.monotonic() + 5
    while not ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ended == ["interrupted"]  # cancelled and finished by the helper
    assert shared.run(value, "next", timeout=5) == "next"


def test_stop_cancels_what_still_runs_and_refuses_new_work(shared):
    ended: list = []
    never = threading.Event()
    job = shared.submit(wait_for_flag, never, "pending", ended)
    with pytest.raises(TimeoutError):
        shared.wait(job, 0.1)  # started, still running
    shared.stop()
    assert ended == ["pending"]
    with pytest.raises(RuntimeError, match="stopped"):
        shared.run(value, 1, timeout=1)
