"""Console pages through Flask's test client (the browser test drives a real Chromium)."""

from __future__ import annotations

import re

import pytest

from oryxos.storage import SessionRecord, ToolInvocationRecord


def _csrf(client, page="/"):
    html = client.get(page).get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


@pytest.mark.parametrize(
    "page",
    [
        "/",
        "/agents",
        "/sessions",
        "/chat",
        "/tools",
        "/notify",
        "/sandbox",
        "/audit",
        "/audit?kind=llm",
    ],
)
def test_pages_render(client, page):
    response = client.get(page)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "<nav>" in html
    assert "http://" not in html and "https://" not in html.replace('placeholder="https://"', "")


def test_dashboard_shows_health_and_counts(client, runtime):
    runtime.storage.sessions.save(SessionRecord(session_id="s", profile_name="default"))
    html = client.get("/").get_data(as_text=True)
    assert 'id="health">ok<' in html
    assert "sessions" in html


def test_notify_channels_create_test_edit_delete(client, runtime, recorder):
    token = _csrf(client, "/notify")
    response = client.post(
        "/notify",
        data={
            "csrf_token": token,
            "name": "ops",
            "type": "recorder",
            "url": "https://hooks.example.com/x",
            "secret": "abc12345",
        },
        follow_redirects=True,
    )
    html = response.get_data(as_text=True)
    assert "channel ops created" in html and 'id="channel-ops"' in html
    assert "abc12345" not in html
    html = client.post(
        "/notify/ops/test", data={"csrf_token": token}, follow_redirects=True
    ).get_data(as_text=True)
    assert "test message delivered to ops" in html
    assert recorder.sent == [("ops", "OryxOS console test message")]
    client.post("/notify/ops/edit", data={"csrf_token": token, "description": "pager"})
    assert runtime.storage.notify_channels.get("ops").description == "pager"
    bad = client.post(
        "/notify",
        data={"csrf_token": token, "name": "x", "type": "recorder", "url": "ftp://x"},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert "form.url" in bad
    client.post("/notify/ops/delete", data={"csrf_token": token})
    assert runtime.storage.notify_channels.get("ops") is None


def test_sandbox_whitelist_add_and_remove(client, runtime):
    token = _csrf(client, "/sandbox")
    client.post("/sandbox", data={"csrf_token": token, "kind": "shell", "value": "ls -l"})
    assert [e.value for e in runtime.storage.whitelist.list("shell")] == ["ls -l"]
    html = client.post(
        "/sandbox",
        data={"csrf_token": token, "kind": "shell", "value": "ls -l"},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert "already" in html  # the conflict is a message, not an error page
    client.post("/sandbox/delete", data={"csrf_token": token, "kind": "shell", "value": "ls -l"})
    assert runtime.storage.whitelist.list() == []


def test_audit_page_filters(client, runtime):
    for i, tool in enumerate(["read_file", "http_get"]):
        runtime.storage.audit.record_tool_invocation(
            ToolInvocationRecord(
                tool_name=tool,
                input={"i": i},
                success=bool(i),
                error_message="refused by rule X" if not i else None,
            )
        )
    html = client.get("/audit?tool=read_file").get_data(as_text=True)
    assert "read_file" in html and "http_get" not in html and "refused by rule X" in html
    html = client.get("/audit?success=true").get_data(as_text=True)
    assert "http_get" in html and "read_file" not in html


def test_session_transcript_shows_tool_calls(client, runtime):
    runtime.storage.sessions.save(
        SessionRecord(
            session_id="abc123",
            profile_name="default",
            messages=[
                {"role": "user", "content": "weather?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "http_get", "arguments": '{"url": "u"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "name": "http_get", "content": "sunny"},
                {"role": "assistant", "content": "It is sunny."},
            ],
        )
    )
    html = client.get("/sessions/abc123").get_data(as_text=True)
    assert "http_get" in html and "sunny" in html and "It is sunny." in html
    assert "abc123" in client.get("/sessions").get_data(as_text=True)


def test_unknown_session_page_is_an_html_404(client):
    response = client.get("/sessions/none")
    assert response.status_code == 404 and response.mimetype == "text/html"
