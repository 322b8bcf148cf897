"""server.api_token: bearer auth on the API, login + cookie + CSRF on the console."""

from __future__ import annotations

import re

import pytest

TOKEN = "tok-0123456789abcdef"


@pytest.fixture
def secured(make_runtime, monkeypatch):
    from oryxos_web import create_app

    monkeypatch.setenv("ORYXOS_TEST_TOKEN", TOKEN)
    runtime = make_runtime(config="server:\n  api_token: ${ORYXOS_TEST_TOKEN}\n")
    return create_app(runtime)


def test_health_needs_no_token(secured):
    assert secured.test_client().get("/api/v1/health").status_code == 200


@pytest.mark.parametrize(
    "path", ["/api/v1/info", "/api/v1/sessions", "/api/v1/openapi.json", "/api/v1/unknown"]
)
def test_every_other_endpoint_needs_the_bearer_token(secured, api_error, path):
    client = secured.test_client()
    response = client.get(path)
    api_error(response, 401, "unauthorized")
    assert response.headers["WWW-Authenticate"] == "Bearer"
    api_error(client.get(path, headers={"Authorization": "Basic abc"}), 401)
    api_error(client.get(path, headers={"Authorization": "Bearer wrong"}), 403, "forbidden")
    api_error(client.get(path, headers={"Authorization": f"Bearer {TOKEN}x"}), 403)


def test_the_right_token_is_accepted(secured):
    client = secured.test_client()
    response = client.get("/api/v1/info", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200 and response.get_json()["auth"] is True
    assert TOKEN.encode() not in response.data


def test_writes_need_the_token_too(secured, api_error):
    client = secured.test_client()
    body = {"kind": "http", "value": "example.com"}
    api_error(client.post("/api/v1/sandbox/whitelist", json=body), 401)
    ok = client.post(
        "/api/v1/sandbox/whitelist", json=body, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert ok.status_code == 201


def test_streamed_turns_need_the_token_and_the_console_login(secured, api_error):
    client = secured.test_client()
    api_error(client.post("/api/v1/sessions/s/messages/stream", json={"message": "x"}), 401)
    api_error(client.post("/api/v1/agents/default/invoke/stream", json={"message": "x"}), 401)
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/chat/stream", data={"csrf_token": _csrf(page), "message": "x"})
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_the_openapi_document_declares_bearer_security(secured):
    doc = (
        secured.test_client()
        .get("/api/v1/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"})
        .get_json()
    )
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert doc["paths"]["/api/v1/health"]["get"]["security"] == []
    assert doc["paths"]["/api/v1/info"]["get"]["security"] == [{"bearer": []}]


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def test_console_pages_redirect_to_login_until_logged_in(secured):
    client = secured.test_client()
    response = client.get("/sessions")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    page = client.get("/login").get_data(as_text=True)
    wrong = client.post("/login", data={"token": "nope", "csrf_token": _csrf(page)})
    assert wrong.status_code == 200 and "wrong token" in wrong.get_data(as_text=True)
    assert client.get("/").status_code == 302
    ok = client.post("/login?next=/sessions", data={"token": TOKEN, "csrf_token": _csrf(page)})
    assert ok.status_code == 302 and ok.headers["Location"].endswith("/sessions")
    assert client.get("/sessions").status_code == 200


def test_console_cookie_is_http_only_and_same_site(secured):
    client = secured.test_client()
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/login", data={"token": TOKEN, "csrf_token": _csrf(page)})
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert TOKEN not in cookie


def test_login_refuses_an_offsite_redirect(secured):
    client = secured.test_client()
    page = client.get("/login").get_data(as_text=True)
    response = client.post(
        "/login?next=//evil.example.com/", data={"token": TOKEN, "csrf_token": _csrf(page)}
    )
    assert response.headers["Location"] == "/"


def test_console_forms_need_the_csrf_token(client):
    client.get("/sandbox")  # a page gives the session its CSRF token
    response = client.post("/sandbox", data={"kind": "http", "value": "example.com"})
    assert response.status_code == 400
    assert "csrf" in response.get_data(as_text=True).lower()
    bad = client.post(
        "/sandbox", data={"kind": "http", "value": "example.com", "csrf_token": "forged"}
    )
    assert bad.status_code == 400


def test_a_form_posted_after_the_login_expired_leads_to_login_then_back_to_a_page(secured):
    from urllib.parse import parse_qs, urlsplit

    client = secured.test_client()
    chat = client.post("/chat", data={"session_id": "console:console:default", "message": "x"})
    assert chat.status_code == 302  # the login first, not a CSRF error for the stale form
    target = parse_qs(urlsplit(chat.headers["Location"]).query)["next"][0]
    assert target == "/chat?session=console:console:default"
    action = client.post("/sandbox/delete", data={"kind": "http", "value": "x"})
    assert parse_qs(urlsplit(action.headers["Location"]).query)["next"][0] == "/"
    # logged in, a form still needs its CSRF token
    page = client.get("/login").get_data(as_text=True)
    client.post("/login", data={"token": TOKEN, "csrf_token": _csrf(page)})
    assert client.post("/sandbox", data={"kind": "http", "value": "x"}).status_code == 400


def test_api_token_is_not_a_console_login_bypass(secured):
    """The bearer header opens the API, not console pages (they use the cookie)."""
    client = secured.test_client()
    response = client.get("/", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 302


def test_an_unset_token_variable_is_a_clear_error(make_runtime, monkeypatch):
    from oryxos_web import create_app

    from oryxos.errors import ConfigError

    monkeypatch.delenv("ORYXOS_MISSING_TOKEN", raising=False)
    runtime = make_runtime(config="server:\n  api_token: ${ORYXOS_MISSING_TOKEN}\n")
    with pytest.raises(ConfigError, match="ORYXOS_MISSING_TOKEN"):
        create_app(runtime)


def test_without_token_the_console_keeps_a_0600_signing_key(runtime, app):
    path = runtime.workspace.path / "web-secret"
    assert path.stat().st_mode & 0o777 == 0o600
    from oryxos_web.auth import signing_key

    assert signing_key(runtime, None) == app.config["SECRET_KEY"]
