"""examples/weather/README.md, offline walk-through, step by step."""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.timeout(180)

QUESTION = "What should I wear in Hangzhou today?"


def test_weather_offline_walkthrough(example) -> None:
    ex = example("weather")
    model_port, stub_port = _ports()
    ex.env.update(ORYXOS_MODEL_PORT=str(model_port), WEATHER_STUB_PORT=str(stub_port))
    # 1. the stand-ins
    ex.start_model("offline/script.yaml", model_port)
    ex.start(
        sys.executable,
        "offline/open_meteo_stub.py",
        "--port",
        str(stub_port),
        port=stub_port,
        name="stub",
    )
    # 2. the offline provider
    ex.env["ORYXOS_PROVIDER"] = "offline"
    # 3. deny by default
    refused = ex.oryxos("chat", "-p", "weather", "-m", QUESTION)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "sandbox.http.allowed_domains" in refused.stderr
    assert "/v1/search" not in ex.output("stub")  # nothing reached the stub
    # 4. allow the stub, ask again
    added = ex.oryxos("sandbox", "add", "http", "127.0.0.1", "--note", "offline Open-Meteo stub")
    assert added.returncode == 0, added.stderr
    answer = ex.oryxos("chat", "-p", "weather", "-m", QUESTION)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "Wear a warm coat" in answer.stdout
    stub_log = ex.output("stub")
    assert "GET /v1/search?name=Hangzhou" in stub_log
    assert "GET /v1/forecast?latitude=30.29365" in stub_log
    # 5. the audit rows: the refused call, then the two that reached the stub
    shown = ex.oryxos("audit", "tools")
    assert shown.returncode == 0 and "sandbox.http.allowed_domains" in shown.stdout
    assert shown.stdout.count("http_get") == 3
    assert ex.oryxos("audit", "llm").stdout.count("offline") == 4
    rows = ex.query(
        "SELECT tool_name, success, error_message, input_json, agent FROM tool_invocations"
        " ORDER BY id"
    )
    assert [(r[0], r[1]) for r in rows] == [("http_get", 0), ("http_get", 1), ("http_get", 1)]
    assert "sandbox.http.allowed_domains" in rows[0][2]
    assert json.loads(rows[2][3])["url"].startswith(f"http://127.0.0.1:{stub_port}/v1/forecast")
    assert {r[4] for r in rows} == {"weather"}
    calls = ex.query("SELECT provider, success FROM llm_calls ORDER BY id")
    assert calls == [("offline", 1)] * 4  # 1 before the refusal, 3 in the answered turn
    # 6. clean up
    removed = ex.oryxos("sandbox", "remove", "http", "127.0.0.1")
    assert removed.returncode == 0, removed.stderr


def _ports() -> tuple[int, int]:
    from tests.e2e.conftest import free_port

    a = free_port()
    b = free_port()
    while b == a:
        b = free_port()
    return a, b
