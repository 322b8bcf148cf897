"""examples/rest/README.md, offline, with httpx instead of curl — including a restart of
``oryxos serve`` in the middle of a session and a ``.backup`` of the database while it runs."""

from __future__ import annotations

import json
import sqlite3
import sys

import httpx
import pytest

from tests.e2e.conftest import free_port

pytestmark = pytest.mark.timeout(240)

SID = "rest:ann:default"


def test_rest_offline_walkthrough(example, tmp_path) -> None:
    ex = example("rest")
    model_port, hook_port, api_port = free_port(), free_port(), free_port()
    ex.env["ORYXOS_MODEL_PORT"] = str(model_port)
    # 1. the scripted model and the receiver
    ex.start_model("offline/script.yaml", model_port, log="requests.jsonl")
    ex.start(
        sys.executable,
        "offline/webhook_receiver.py",
        "--port",
        str(hook_port),
        port=hook_port,
        name="receiver",
    )
    ex.env["ORYXOS_PROVIDER"] = "offline"
    # 2. the server, with a token
    token = "e2e-" + "x" * 28
    ex.env["ORYXOS_API_TOKEN"] = token
    serve = ex.serve(api_port)
    api = f"http://127.0.0.1:{api_port}/api/v1"
    auth = {"Authorization": f"Bearer {token}"}
    client = httpx.Client(base_url=api, headers=auth, timeout=60)
    try:
        # 3. health without a token; the rest needs it
        assert httpx.get(f"{api}/health").status_code == 200
        assert httpx.get(f"{api}/info").status_code == 401
        info = client.get("/info")
        assert info.status_code == 200 and token not in info.text
        assert "default" in {p["name"] for p in client.get("/profiles").json()["items"]}
        # 4. a session, a message, the history
        created = client.post("/sessions", json={"agent": "default", "user": "ann"})
        assert created.status_code == 201 and created.json()["session_id"] == SID, created.text
        turn = client.post(
            f"/sessions/{SID}/messages", json={"message": "What time is it in Shanghai?"}
        )
        assert turn.status_code == 200, turn.text
        assert "in Shanghai" in turn.json()["answer"]
        assert turn.json()["tool_calls"][0]["name"] == "current_time"
        assert turn.json()["tool_calls"][0]["arguments"] == {"timezone": "Asia/Shanghai"}
        history = client.get(f"/sessions/{SID}").json()["messages"]
        assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]
        # a consistent backup while the server runs (docs/deployment.md)
        backup = tmp_path / "backup.db"
        # (SQLite's online backup API, as docs/deployment.md shows for Python; the sqlite3
        # program's ".backup" is the same API — CI may not have that program)
        with sqlite3.connect(ex.dir / ".oryxos/oryxos.db") as src, sqlite3.connect(backup) as dst:
            src.backup(dst)
        with sqlite3.connect(backup) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert conn.execute("SELECT COUNT(*) FROM tool_invocations").fetchone() == (1,)
        # 5. restart in the middle of the session (SIGTERM, then a new process)
        ex.stop(serve)
        assert serve.returncode == 0, ex.output("serve")
        serve = ex.serve(api_port, name="serve2")
        again = client.post(
            f"/sessions/{SID}/messages", json={"message": "And what did I ask you before?"}
        )
        assert again.status_code == 200, again.text
        assert again.json()["answer"] == "You asked me what time it is in Shanghai."
        assert len(client.get(f"/sessions/{SID}").json()["messages"]) == 6
        # 6. one-shot
        hello = client.post("/agents/default/invoke", json={"message": "Hello!"})
        assert (
            hello.status_code == 200 and hello.json()["answer"] == "Hello from the scripted model."
        )
        # 7. notify channels
        channel = {
            "name": "team",
            "type": "webhook",
            "url": f"http://127.0.0.1:{hook_port}/hook",
            "description": "local receiver",
        }
        assert client.post("/notify-channels", json=channel).status_code == 201
        assert "team" in json.dumps(client.get("/notify-channels").json())
        tested = client.post("/notify-channels/team/test", json={"content": "test from curl"})
        assert tested.status_code == 200 and tested.json()["delivered"] is True, tested.text
        told = client.post(
            "/agents/default/invoke",
            json={"message": "Please tell the team the walk-through works"},
        )
        assert told.status_code == 200 and told.json()["answer"] == "Done — I told the team."
        received = [json.loads(x) for x in (ex.dir / "received.jsonl").read_text().splitlines()]
        assert [r["content"] for r in received] == [
            "test from curl",
            "The REST walk-through works.",
        ]
        # 8. the whitelist
        entry = {"kind": "http", "value": "api.open-meteo.com", "note": "weather"}
        assert client.post("/sandbox/whitelist", json=entry).status_code == 201
        assert (
            "api.open-meteo.com" in client.get("/sandbox/whitelist", params={"kind": "http"}).text
        )
        removed = client.delete(
            "/sandbox/whitelist", params={"kind": "http", "value": "api.open-meteo.com"}
        )
        assert removed.status_code == 204
        # 9. the audit
        tools = client.get("/audit/tool-invocations", params={"session_id": SID}).json()
        assert [(r["tool_name"], r["success"]) for r in tools["items"]] == [("current_time", True)]
        llm = client.get("/audit/llm-calls", params={"limit": 5}).json()
        assert llm["total"] == 6  # 2 + 1 in the session, 1 hello, 2 notify
        # errors have one shape
        missing = client.post("/sessions/rest:nobody:default/messages", json={"message": "hi"})
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        # 10. archive, delete, stop
        assert client.delete(f"/sessions/{SID}").status_code == 204
        assert client.delete("/notify-channels/team").status_code == 204
    finally:
        client.close()
    ex.stop(serve)
    assert serve.returncode == 0
    rows = ex.query("SELECT status FROM sessions WHERE session_id = ?", SID)
    assert rows == [("archived",)]
