"""``oryxos serve`` and ``oryxos gateway``: real waitress servers on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from oryxos.testing import inline_plugin

pytestmark = pytest.mark.slow


def _start(args, cwd, env=None):
    proc = subprocess.Popen(
        [sys.executable, "-m", "oryxos.cli", *args],
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    lines = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        match = re.search(r"serving on (http://\S+?) ", line)
        if match:
            return proc, match.group(1), lines
    proc.kill()
    raise AssertionError("server did not start: " + "".join(lines))


def test_serve_initialises_a_missing_workspace_and_stops_on_sigterm(tmp_path):
    proc, url, lines = _start(["serve", "--port", "0"], tmp_path)
    try:
        assert any("initialised a new workspace" in line for line in lines)
        assert (tmp_path / ".oryxos" / "config.yaml").is_file()
        assert httpx.get(url + "/api/v1/health").json()["status"] == "ok"
        assert "Dashboard" in httpx.get(url + "/").text
        assert httpx.get(url + "/api/v1/info").status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    log = (tmp_path / ".oryxos" / "logs" / "oryxos.log").read_text()
    access = [line for line in log.splitlines() if '"oryxos.web.access"' in line]
    info = [line for line in access if '"path": "/api/v1/info"' in line]
    assert info and '"status": 200' in info[0] and '"method": "GET"' in info[0]
    assert json.loads(info[0])["duration_ms"] > 0
    # successful health probes are not logged (they would flood the log)
    assert not [line for line in access if '"path": "/api/v1/health"' in line]


def test_serve_refuses_a_public_address_without_a_token(tmp_path, oryxos_cli):
    result = oryxos_cli.invoke(["serve", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2
    assert "refusing to listen on 0.0.0.0 without an API token" in result.output
    assert "--insecure" in result.output


def test_serve_with_an_unset_token_variable_says_which(oryxos_cli, oryxos_workspace):
    oryxos_workspace.config_file.write_text("server:\n  api_token: ${NOT_SET_TOKEN_VAR}\n")
    result = oryxos_cli.invoke(["serve", "--port", "0"], env={"NOT_SET_TOKEN_VAR": None})
    assert result.exit_code == 2 and "NOT_SET_TOKEN_VAR is not set" in result.output
    # an empty token would turn authentication off: refused too
    result = oryxos_cli.invoke(["serve", "--port", "0"], env={"NOT_SET_TOKEN_VAR": " "})
    assert result.exit_code == 2 and "empty" in result.output


def test_public_address_with_a_token_is_allowed(tmp_path):
    (tmp_path / ".oryxos").mkdir()
    subprocess.run(
        [sys.executable, "-m", "oryxos.cli", "init", "--force"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    (tmp_path / ".oryxos" / "config.yaml").write_text("server:\n  api_token: ${T_TOKEN}\n")
    proc, url, _ = _start(
        ["serve", "--host", "0.0.0.0", "--port", "0"], tmp_path, env={"T_TOKEN": "tok-abcdef12"}
    )
    try:
        port = url.rsplit(":", 1)[1]
        local = f"http://127.0.0.1:{port}"
        assert httpx.get(local + "/api/v1/info").status_code == 401
        ok = httpx.get(local + "/api/v1/info", headers={"Authorization": "Bearer tok-abcdef12"})
        assert ok.status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 0


def test_shutdown_lets_a_request_in_flight_finish(make_runtime):
    from oryxos_web import create_app
    from oryxos_web.server import Server

    started = threading.Event()

    def routes(app, api, runtime):
        @api.route("GET", "/slow", summary="slow")
        def slow():
            started.set()
            time.sleep(1.0)
            return {"done": True}

    app = create_app(make_runtime(inline_plugin("slow", oryxos_web_routes=routes)))
    server = Server(app, host="127.0.0.1", port=0, threads=4, deadline=10)
    serving = threading.Thread(target=server.serve, kwargs={"install_signals": False})
    serving.start()
    result = {}

    def call():
        result["response"] = httpx.get(server.url + "/api/v1/slow", timeout=10)

    client = threading.Thread(target=call)
    client.start()
    assert started.wait(5)
    url = server.url
    server.stop()
    client.join(10)
    serving.join(10)
    assert not serving.is_alive()
    assert result["response"].status_code == 200 and result["response"].json() == {"done": True}
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/api/v1/health", timeout=2)


def test_shutdown_lets_a_stream_in_flight_finish(make_runtime):
    """A streamed response is in flight until its last event, not until the view returned."""
    from oryxos_web import create_app
    from oryxos_web.server import Server

    def routes(app, api, runtime):
        @api.route("GET", "/ticks", summary="ticks", stream=True)
        def ticks():
            def events():
                yield "event: tick\ndata: 1\n\n"
                time.sleep(1.0)
                yield "event: tick\ndata: 2\n\n"

            return events()

    app = create_app(make_runtime(inline_plugin("ticks", oryxos_web_routes=routes)))
    server = Server(app, host="127.0.0.1", port=0, threads=4, deadline=10)
    serving = threading.Thread(target=server.serve, kwargs={"install_signals": False})
    serving.start()
    first = threading.Event()
    lines: list[str] = []

    def call():
        with httpx.stream("GET", server.url + "/api/v1/ticks", timeout=10) as response:
            for line in response.iter_lines():
                lines.append(line)
                if line.startswith("data:"):
                    first.set()

    client = threading.Thread(target=call)
    client.start()
    assert first.wait(5)
    server.stop()  # while the view's iterator still sleeps between its two events
    client.join(10)
    serving.join(10)
    assert [ln for ln in lines if ln.startswith("data:")] == ["data: 1", "data: 2"]


def test_gateway_runs_channel_plugins_beside_the_api(oryxos_cli):
    events = []

    class Bot:
        interactive = False

        def run(self, runtime, stop_event):
            events.append(("started", runtime.storage.check() is None))
            os.kill(os.getpid(), signal.SIGTERM)  # as systemd would, once the bot is up
            stop_event.wait(10)
            events.append("stopped")

    class Terminal:
        interactive = True

        def run(self, runtime, stop_event):  # pragma: no cover - must not run
            events.append("interactive channel ran")

    plugin = inline_plugin(
        "bots",
        oryxos_register_channels=lambda register: (
            register("bot", Bot()),
            register("tty", Terminal()),
        ),
    )
    result = oryxos_cli.invoke(["gateway", "--port", "0"], plugins=[plugin])
    assert result.exit_code == 0, result.output
    assert "channels: bot" in result.output
    assert events == [("started", True), "stopped"]


def test_sigterm_lets_a_turn_in_flight_finish(tmp_path, oryxos_model_server):
    from oryxos.testing import Reply, make_workspace, use_model_server

    workspace = make_workspace(tmp_path)
    use_model_server(workspace, oryxos_model_server, max_retries=0)
    oryxos_model_server.script(Reply.answer("warm"), Reply.answer("finished").after(1.5))
    proc, url, _ = _start(["serve", "--port", "0", "--shutdown-timeout", "20"], tmp_path)
    try:
        api = url + "/api/v1"
        sid = httpx.post(f"{api}/sessions", json={}).json()["session_id"]
        # the first turn imports litellm (seconds): not the one in flight at SIGTERM
        assert (
            httpx.post(
                f"{api}/sessions/{sid}/messages", json={"message": "a"}, timeout=60
            ).status_code
            == 200
        )
        result = {}

        def turn():
            result["r"] = httpx.post(
                f"{api}/sessions/{sid}/messages", json={"message": "b"}, timeout=30
            )

        thread = threading.Thread(target=turn)
        thread.start()
        deadline = time.monotonic() + 10
        while len(oryxos_model_server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)  # the turn is waiting on the model now
        proc.send_signal(signal.SIGTERM)
        thread.join(30)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert result["r"].status_code == 200 and result["r"].json()["answer"] == "finished"


def test_insecure_allows_a_public_address_without_token(tmp_path):
    proc, url, _ = _start(["serve", "--host", "0.0.0.0", "--port", "0", "--insecure"], tmp_path)
    try:
        port = url.rsplit(":", 1)[1]
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/info").status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
