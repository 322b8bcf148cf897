"""Concurrent turns on a real waitress server: 50 sessions, a model that takes 0.5 s each,
finish in about one model round trip — not fifty."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import httpx
import pytest

from oryxos.testing import Reply, use_model_server

pytestmark = pytest.mark.slow

SESSIONS = 50
LATENCY = 0.5


def test_50_concurrent_turns_take_about_one_round_trip(
    oryxos_workspace, oryxos_model_server, make_runtime
):
    from oryxos_web import create_app
    from oryxos_web.server import Server

    oryxos_model_server.responder = lambda body: Reply.answer("ok").after(LATENCY)
    use_model_server(oryxos_workspace, oryxos_model_server, max_retries=0)
    runtime = make_runtime()
    server = Server(create_app(runtime), host="127.0.0.1", port=0, threads=64, deadline=10)
    serving = threading.Thread(target=server.serve, kwargs={"install_signals": False})
    serving.start()
    try:
        api = server.url + "/api/v1"
        with httpx.Client(timeout=60) as client:
            ids = [
                client.post(f"{api}/sessions", json={"user": f"u{i}"}).json()["session_id"]
                for i in range(SESSIONS + 1)
            ]
            # the first turn pays for importing litellm: not part of the measurement
            warm = client.post(f"{api}/sessions/{ids.pop()}/messages", json={"message": "hi"})
            assert warm.status_code == 200, warm.text

        # one client for all threads: building one per request costs ~17 ms of CPU each
        limits = httpx.Limits(max_connections=SESSIONS, max_keepalive_connections=SESSIONS)
        with httpx.Client(timeout=60, limits=limits) as client:

            def turn(sid):
                return client.post(f"{api}/sessions/{sid}/messages", json={"message": "hi"})

            with concurrent.futures.ThreadPoolExecutor(SESSIONS) as pool:
                started = time.monotonic()
                responses = list(pool.map(turn, ids))
                elapsed = time.monotonic() - started
    finally:
        server.stop()
        serving.join(15)
    assert [r.status_code for r in responses] == [200] * SESSIONS
    assert all(r.json()["answer"] == "ok" for r in responses)
    # one round trip is 0.5 s; fifty in a row would be 25 s. Allow for a busy 2-core machine.
    print(f"{SESSIONS} concurrent turns: {elapsed:.2f} s")
    assert elapsed < 4 * LATENCY, f"{SESSIONS} turns took {elapsed:.2f} s"
