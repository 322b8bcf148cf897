"""Streamed turns: ``POST /sessions/{id}/messages/stream`` (Server-Sent Events).

Against the scripted model server through litellm's real HTTP path (it streams one word per
chunk), with Flask's test client for the content and a real waitress server on 127.0.0.1 for
what only a socket shows (events arriving while the turn still runs).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time

import pytest

from oryxos.storage import AuditQuery
from oryxos.testing import Reply


def events_of(text: str) -> list[tuple[str, dict]]:
    """Parse an SSE body into (event, data) pairs (comments skipped)."""
    out = []
    for block in text.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln and not ln.startswith(":")]
        if not lines:
            continue
        fields = dict(ln.split(": ", 1) for ln in lines)
        out.append((fields["event"], json.loads(fields["data"])))
    return out


def _session(client, agent="default"):
    return client.post("/api/v1/sessions", json={"agent": agent}).get_json()["session_id"]


def test_a_streamed_turn_sends_tool_events_text_and_the_same_body_at_the_end(
    turn_app,
    oryxos_model_server,
):
    runtime, client = turn_app()
    oryxos_model_server.script(
        Reply.tool("shout", {"text": "hey"}), Reply.answer("HEY is what I shouted.")
    )
    sid = _session(client, "loud")
    response = client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "shout"})
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    events = events_of(response.get_data(as_text=True))
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "thinking" and kinds[-1] == "done"
    assert ("tool_call", {"name": "shout", "arguments": {"text": "hey"}}) in events
    assert (
        "tool_result",
        {"name": "shout", "success": True, "result": "HEY", "error_message": None},
    ) in events
    deltas = [data["delta"] for kind, data in events if kind == "text"]
    assert len(deltas) > 1, "the reply did not arrive in pieces"
    assert "".join(deltas) == "HEY is what I shouted."
    done = events[-1][1]
    assert done["answer"] == "HEY is what I shouted." and done["session_id"] == sid
    assert done["tool_calls"][0]["result"] == "HEY" and done["usage"]["total_tokens"] > 0
    # stored and audited as a non-streamed turn is
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert history[0] == {"role": "user", "content": "shout"}
    assert history[-1]["content"] == "HEY is what I shouted."
    assert [
        c.tool_name
        for c in runtime.storage.audit.tool_invocations(AuditQuery(session_id=sid)).items
    ] == ["shout"]
    assert len(runtime.storage.audit.llm_calls(AuditQuery(session_id=sid)).items) == 2


def test_refusals_come_as_json_with_their_status_before_any_stream(
    turn_app,
    oryxos_model_server,
    api_error,
):
    _, client = turn_app()
    api_error(
        client.post("/api/v1/sessions/nope/messages/stream", json={"message": "x"}),
        404,
        "not_found",
    )
    sid = _session(client)
    api_error(
        client.post(f"/api/v1/sessions/{sid}/messages/stream", json={}), 422, "validation_failed"
    )
    client.delete(f"/api/v1/sessions/{sid}")
    api_error(
        client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "x"}),
        409,
        "conflict",
    )


def test_an_unconfigured_provider_is_503_before_the_stream(make_runtime, api_error):
    from oryxos_web import create_app

    client = create_app(make_runtime()).test_client()
    sid = _session(client)
    error = api_error(
        client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "x"}),
        503,
        "not_configured",
    )
    assert "provider" in error["message"]


def test_a_provider_failure_is_an_error_event_and_the_message_is_kept(
    turn_app,
    oryxos_model_server,
):
    _, client = turn_app()
    oryxos_model_server.script(Reply.error(500))
    sid = _session(client)
    response = client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "Hi"})
    events = events_of(response.get_data(as_text=True))
    kind, data = events[-1]
    assert kind == "error" and data["status"] == 502
    assert data["error"]["code"] == "provider_error" and data["error"]["details"] == {
        "session_id": sid
    }
    assert "done" not in [k for k, _ in events]
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert history[0] == {"role": "user", "content": "Hi"}


@pytest.fixture
def live(turn_app):
    """The same app behind a real waitress server on 127.0.0.1."""
    from oryxos_web import create_app
    from oryxos_web.server import Server

    runtime, _ = turn_app()
    server = Server(create_app(runtime), host="127.0.0.1", port=0, threads=4, deadline=5)
    thread = threading.Thread(target=server.serve, kwargs={"install_signals": False})
    thread.start()
    yield server
    server.stop()
    thread.join(10)


def test_events_reach_the_client_while_the_turn_still_runs(live, oryxos_model_server):
    """Over a socket: the tool events arrive a scripted 1.5 s before the model's answer."""
    oryxos_model_server.script(
        Reply.tool("shout", {"text": "hey"}), Reply.answer("Shouted.").after(1.5)
    )
    conn = http.client.HTTPConnection("127.0.0.1", live.waitress.effective_port, timeout=10)
    conn.request(
        "POST",
        "/api/v1/sessions",
        json.dumps({"agent": "loud"}),
        {"Content-Type": "application/json"},
    )
    sid = json.loads(conn.getresponse().read())["session_id"]
    conn.request(
        "POST",
        f"/api/v1/sessions/{sid}/messages/stream",
        json.dumps({"message": "shout"}),
        {"Content-Type": "application/json"},
    )
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Type").startswith("text/event-stream")
    arrived: dict[str, float] = {}
    block = ""
    while "done" not in arrived:
        line = response.readline().decode()
        assert line, "the stream ended without a done event"
        if line.strip():
            block += line
            continue
        kind = events_of(block)[0][0] if events_of(block) else None
        block = ""
        if kind is not None:
            arrived.setdefault(kind, time.monotonic())
    conn.close()
    assert arrived["tool_result"] < arrived["done"]
    assert arrived["done"] - arrived["tool_result"] >= 1.0, "events were held back to the end"


def _csrf(client) -> str:
    html = client.get("/chat?agent=default").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def test_the_console_chat_streams_a_new_conversation_then_continues_it(
    turn_app, oryxos_model_server
):
    _, client = turn_app()
    oryxos_model_server.script(Reply.answer("Hi from the agent."), Reply.answer("Again."))
    token = _csrf(client)
    first = client.post(
        "/chat/stream", data={"csrf_token": token, "agent": "default", "message": "Hello"}
    )
    assert first.status_code == 200 and first.mimetype == "text/event-stream"
    events = events_of(first.get_data(as_text=True))
    kind, session = events[0]
    assert kind == "session" and session["url"] == f"/chat?session={session['session_id']}"
    assert events[-1][0] == "done" and events[-1][1]["answer"] == "Hi from the agent."
    sid = session["session_id"]
    again = client.post(
        "/chat/stream",
        data={"csrf_token": token, "session_id": sid, "agent": "default", "message": "More"},
    )
    assert events_of(again.get_data(as_text=True))[-1][1]["answer"] == "Again."
    history = client.get(f"/api/v1/sessions/{sid}").get_json()["messages"]
    assert [m["content"] for m in history] == ["Hello", "Hi from the agent.", "More", "Again."]
    page = client.get(session["url"]).get_data(as_text=True)  # the page the script moves to
    assert "Hi from the agent." in page and "Again." in page


def test_the_console_chat_stream_refuses_with_a_flash_and_where_to_go(turn_app):
    _, client = turn_app()
    token = _csrf(client)
    sid = _session(client)
    client.delete(f"/api/v1/sessions/{sid}")
    refused = client.post(
        "/chat/stream",
        data={"csrf_token": token, "session_id": sid, "agent": "default", "message": "Hi"},
    )
    assert refused.status_code == 409
    assert refused.get_json() == {"redirect": f"/chat?session={sid}"}
    page = client.get(f"/chat?session={sid}").get_data(as_text=True)
    assert "is archived" in page and 'class="flash error"' in page
    empty = client.post("/chat/stream", data={"csrf_token": token, "message": "  "})
    assert empty.status_code == 422 and empty.get_json() == {"redirect": "/chat?agent=default"}
    forged = client.post("/chat/stream", data={"csrf_token": "forged", "message": "Hi"})
    assert forged.status_code == 400  # the console's CSRF check covers the stream too


def test_a_client_that_goes_away_cancels_the_turn_at_its_next_step(turn_app, oryxos_model_server):
    """The server closes a stream's iterator when the client has gone; the turn then stops
    before its tools run and before the next model call."""
    from oryxos_web.services import stream_message

    runtime, client = turn_app()
    oryxos_model_server.script(
        Reply.tool("shout", {"text": "hey"}).after(0.5), Reply.answer("never asked for")
    )
    sid = _session(client, "loud")
    events = stream_message(runtime, sid, "shout")
    assert next(events).startswith("event: thinking")
    events.close()  # what waitress does when a write finds the client gone
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        history = runtime.storage.sessions.get(sid).messages
        if any(m["role"] == "tool" for m in history):
            break
        time.sleep(0.05)
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[-1]["content"].endswith("cancelled")
    assert oryxos_model_server.remaining == 1  # the second model call was never made
    assert runtime.storage.audit.tool_invocations(AuditQuery(session_id=sid)).items == []


def test_silence_is_filled_with_keep_alive_comments(turn_app, oryxos_model_server, monkeypatch):
    from oryxos_web import turns

    monkeypatch.setattr(turns, "KEEPALIVE_SECONDS", 0.2)
    _, client = turn_app()
    oryxos_model_server.script(Reply.answer("Slow but sure.").after(1.0))
    sid = _session(client)
    body = client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "hi"}).get_data(
        as_text=True
    )
    assert ": keep-alive\n\n" in body
    assert events_of(body)[-1][1]["answer"] == "Slow but sure."


def test_a_one_shot_invoke_streams_and_leaves_nothing_to_continue(
    turn_app, oryxos_model_server, api_error
):
    runtime, client = turn_app()
    oryxos_model_server.script(Reply.answer("Forty-two, streamed."))
    response = client.post("/api/v1/agents/default/invoke/stream", json={"message": "answer?"})
    assert response.mimetype == "text/event-stream"
    events = events_of(response.get_data(as_text=True))
    assert "".join(d["delta"] for k, d in events if k == "text") == "Forty-two, streamed."
    kind, done = events[-1]
    assert kind == "done" and done["answer"] == "Forty-two, streamed."
    assert done["session_id"] is None
    assert runtime.storage.sessions.list(status="active").total == 0
    archived = runtime.storage.sessions.list(status="archived").items
    assert len(archived) == 1 and archived[0].session_id.startswith("invoke:default:")
    api_error(
        client.post("/api/v1/agents/nobody/invoke/stream", json={"message": "x"}),
        404,
        "not_found",
    )


@pytest.mark.parametrize(
    "error,status,code",
    [
        ("storage", 503, "storage_unavailable"),
        ("bug", 500, "internal_error"),
    ],
)
def test_a_failure_inside_the_turn_is_an_error_event_with_the_usual_status(
    turn_app, monkeypatch, error, status, code
):
    from oryxos.errors import StorageError

    runtime, client = turn_app()

    def failing_turn(*args, **kwargs):
        if error == "storage":
            raise StorageError("database is locked")
        raise RuntimeError("a bug with a secret detail")

    monkeypatch.setattr(runtime.loop, "run_turn", failing_turn)
    sid = _session(client)
    body = client.post(f"/api/v1/sessions/{sid}/messages/stream", json={"message": "hi"})
    kind, data = events_of(body.get_data(as_text=True))[-1]
    assert kind == "error" and data["status"] == status and data["error"]["code"] == code
    assert "secret detail" not in body.get_data(as_text=True)  # a bug's text stays in the log
