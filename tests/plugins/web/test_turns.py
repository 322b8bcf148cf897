"""Turns over the API and the console: the kernel's ReAct loop against the scripted model
server on 127.0.0.1 (real litellm, real HTTP, real SQLite)."""

from __future__ import annotations

import re

from oryxos.storage import AuditQuery
from oryxos.testing import Reply


def test_session_message_runs_a_turn_and_history_is_kept(turn_app, oryxos_model_server):
    runtime, client = turn_app()
    oryxos_model_server.script(Reply.answer("Hello, Ann."))
    session = client.post("/api/v1/sessions", json={"user": "ann"}).get_json()
    sid = session["session_id"]
    response = client.post(f"/api/v1/sessions/{sid}/messages", json={"message": "Hi"})
    assert response.status_code == 200, response.data
    turn = response.get_json()
    assert turn["answer"] == "Hello, Ann." and turn["success"] is True
    assert turn["session_id"] == sid and turn["agent"] == "default"
    assert turn["tool_calls"] == []
    assert turn["usage"]["total_tokens"] > 0
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert [(m["role"], m["content"]) for m in history] == [
        ("user", "Hi"),
        ("assistant", "Hello, Ann."),
    ]
    calls = runtime.storage.audit.llm_calls(AuditQuery(session_id=sid)).items
    assert len(calls) == 1 and calls[0].success


def test_tool_calls_are_reported(turn_app, oryxos_model_server):
    _, client = turn_app()
    oryxos_model_server.script(Reply.tool("shout", {"text": "hey"}), Reply.answer("HEY it is."))
    sid = client.post("/api/v1/sessions", json={"agent": "loud"}).get_json()["session_id"]
    turn = client.post(f"/api/v1/sessions/{sid}/messages", json={"message": "shout hey"})
    body = turn.get_json()
    assert body["answer"] == "HEY it is."
    assert body["tool_calls"] == [
        {
            "name": "shout",
            "arguments": {"text": "hey"},
            "success": True,
            "result": "HEY",
            "error_message": None,
        }
    ]
    audit = client.get(f"/api/v1/audit/tool-invocations?session_id={sid}").get_json()
    assert [i["tool_name"] for i in audit["items"]] == ["shout"]


def test_provider_failure_is_502_and_the_message_is_kept(turn_app, oryxos_model_server, api_error):
    _, client = turn_app()
    oryxos_model_server.script(Reply.error(500))
    sid = client.post("/api/v1/sessions", json={}).get_json()["session_id"]
    error = api_error(
        client.post(f"/api/v1/sessions/{sid}/messages", json={"message": "Hi"}),
        502,
        "provider_error",
    )
    assert error["details"] == {"session_id": sid}
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert history[0] == {"role": "user", "content": "Hi"}


def test_provider_timeout_is_504(turn_app, oryxos_model_server, api_error):
    _, client = turn_app(timeout=0.3)
    oryxos_model_server.script(Reply.answer("too late").after(2))
    sid = client.post("/api/v1/sessions", json={}).get_json()["session_id"]
    api_error(
        client.post(f"/api/v1/sessions/{sid}/messages", json={"message": "Hi"}),
        504,
        "provider_timeout",
    )


def test_invoke_is_one_shot(turn_app, oryxos_model_server):
    runtime, client = turn_app()
    oryxos_model_server.script(Reply.answer("42"))
    response = client.post("/api/v1/agents/default/invoke", json={"message": "answer?"})
    assert response.status_code == 200, response.data
    body = response.get_json()
    assert body["answer"] == "42" and body["session_id"] is None
    page = runtime.storage.sessions.list(status="active")
    assert page.total == 0  # nothing to continue
    archived = runtime.storage.sessions.list(status="archived").items
    assert len(archived) == 1 and archived[0].session_id.startswith("invoke:default:")


def test_console_chat(turn_app, oryxos_model_server):
    _, client = turn_app()
    oryxos_model_server.script(Reply.answer("Hi from the agent."), Reply.answer("Again."))
    html = client.get("/chat?agent=default").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    response = client.post(
        "/chat", data={"csrf_token": token, "agent": "default", "message": "Hello"}
    )
    assert response.status_code == 302 and "session=" in response.headers["Location"]
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Hello" in html and "Hi from the agent." in html
    sid = re.search(r'name="session_id" value="([^"]+)"', html).group(1)
    client.post(
        "/chat",
        data={"csrf_token": token, "session_id": sid, "agent": "default", "message": "More"},
    )
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert [m["content"] for m in history] == ["Hello", "Hi from the agent.", "More", "Again."]


def test_an_unconfigured_provider_is_503_naming_it(make_runtime, oryxos_workspace, api_error):
    from oryxos_web import create_app

    agent = oryxos_workspace.agents_dir / "lost"
    (agent / "skills").mkdir(parents=True)
    (agent / "AGENT.md").write_text("---\nname: lost\nprovider: {name: nowhere}\n---\nHi.\n")
    client = create_app(make_runtime()).test_client()
    sid = client.post("/api/v1/sessions", json={"agent": "lost"}).get_json()["session_id"]
    error = api_error(
        client.post(f"/api/v1/sessions/{sid}/messages", json={"message": "Hi"}),
        503,
        "not_configured",
    )
    assert "nowhere" in error["message"]
    api_error(client.post("/api/v1/agents/lost/invoke", json={"message": "Hi"}), 503)
