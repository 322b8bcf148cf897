"""Every /api/v1 endpoint and error through Flask's test client, on a real SQLite workspace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from oryxos.errors import OryxError
from oryxos.storage import LlmCallRecord, SessionRecord, ToolInvocationRecord
from oryxos.testing import inline_plugin

# Health and info -------------------------------------------------------------------------


def test_health_checks_the_database(client):
    from oryxos_storage.migrations import LATEST

    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok", "schema_version": LATEST}


def test_health_is_503_in_the_error_shape_when_the_database_fails(runtime, client, api_error):
    def broken():
        raise OSError("disk gone")

    runtime.storage.check = broken
    error = api_error(client.get("/api/v1/health"), 503, "unhealthy")
    assert "disk gone" in error["message"]


def test_health_checks_the_database_at_most_once_a_second(runtime, monkeypatch):
    from oryxos_web.routes import DatabaseProbe

    calls = []
    real_check = runtime.storage.check
    runtime.storage.check = lambda: calls.append(1) or real_check()
    now = [100.0]
    monkeypatch.setattr("oryxos_web.routes.time.monotonic", lambda: now[0])
    probe = DatabaseProbe(runtime, ttl=1.0)
    version = runtime.storage.schema_version()
    assert version >= 1 and probe() == (version, None) and probe() == (version, None)
    assert len(calls) == 1  # the second probe reused the first check
    now[0] += 1.0
    runtime.storage.check = lambda: (_ for _ in ()).throw(OSError("disk gone"))
    assert probe() == (None, "disk gone")  # a failure is seen once the second is over


def test_info_tells_whether_providers_are_configured_and_never_shows_a_key(
    make_runtime, monkeypatch
):
    from oryxos_web import create_app

    monkeypatch.setenv("SET_KEY", "sk-very-secret-value")
    monkeypatch.delenv("UNSET_KEY", raising=False)
    runtime = make_runtime(
        config="providers:\n"
        "  one: {model: openai/a, api_key: '${SET_KEY}'}\n"
        "  two: {model: openai/b, api_key: '${UNSET_KEY}'}\n"
        "  local: {model: openai/c, api_base: 'http://127.0.0.1:1/v1'}\n"
        "default_provider: one\n"
    )
    response = create_app(runtime).test_client().get("/api/v1/info")
    assert response.status_code == 200
    assert b"sk-very-secret-value" not in response.data
    info = response.get_json()
    providers = {p["name"]: p for p in info["providers"]}
    assert providers["one"] == {
        "name": "one",
        "model": "openai/a",
        "configured": True,
        "default": True,
        "key_variables": ["SET_KEY"],
    }
    assert providers["two"]["configured"] is False
    assert providers["local"]["configured"] is True and providers["local"]["key_variables"] == []
    assert {"storage", "web"} <= {p["name"] for p in info["plugins"]}
    assert info["auth"] is False


# Errors ---------------------------------------------------------------------------------------


def test_unknown_endpoint_is_a_json_404(client, api_error):
    api_error(client.get("/api/v1/nothing-here"), 404, "not_found")


def test_wrong_method_is_a_json_405_with_allow(client, api_error):
    response = client.post("/api/v1/health")
    api_error(response, 405, "method_not_allowed")
    assert "GET" in response.headers["Allow"]


def test_malformed_json_is_400(client, api_error):
    response = client.post(
        "/api/v1/sandbox/whitelist", data="{not json", content_type="application/json"
    )
    api_error(response, 400, "malformed_json")


def test_a_body_that_is_not_an_object_is_422(client, api_error):
    api_error(client.post("/api/v1/sandbox/whitelist", json=[1, 2]), 422, "validation_failed")


def test_invalid_fields_are_422_naming_each_field(client, api_error):
    error = api_error(
        client.post("/api/v1/sandbox/whitelist", json={"kind": "ftp", "extra": 1}),
        422,
        "validation_failed",
    )
    fields = {d["field"] for d in error["details"]}
    assert fields == {"body.kind", "body.value", "body.extra"}


def test_invalid_query_is_422(client, api_error):
    error = api_error(client.get("/api/v1/audit/llm-calls?limit=0"), 422, "validation_failed")
    assert error["details"][0]["field"] == "query.limit"


def test_a_body_over_max_body_bytes_is_413(make_runtime, api_error):
    from oryxos_web import create_app

    runtime = make_runtime(config="server:\n  max_body_bytes: 200\n")
    client = create_app(runtime).test_client()
    response = client.post("/api/v1/sandbox/whitelist", json={"kind": "http", "value": "x" * 500})
    api_error(response, 413, "request_entity_too_large")


class ProviderError(OryxError):
    """Named like the providers' error: the web plugin maps by class name."""


class ProviderTimeoutError(ProviderError):
    pass


def _raising_routes(app, api, runtime):
    @api.route("GET", "/boom", summary="raises a bug")
    def boom():
        raise RuntimeError("secret internals")

    @api.route("GET", "/provider-down", summary="raises a provider error")
    def provider_down():
        raise ProviderError("provider deepseek answered 500")

    @api.route("GET", "/refused", summary="raises a sandbox refusal")
    def refused():
        from oryxos.sandbox import SandboxViolation

        raise SandboxViolation("sandbox.http.allowed_domains", "evil.example is not allowed")

    @api.route("GET", "/provider-slow", summary="raises a provider timeout")
    def provider_slow():
        raise ProviderTimeoutError("provider deepseek timed out after 60 s")


@pytest.fixture
def raising_client(make_runtime):
    from oryxos_web import create_app

    runtime = make_runtime(inline_plugin("raiser", oryxos_web_routes=_raising_routes))
    return create_app(runtime).test_client()


def test_a_bug_is_a_500_without_traceback_or_internals(raising_client, api_error, caplog):
    error = api_error(raising_client.get("/api/v1/boom"), 500, "internal_error")
    assert "secret internals" not in error["message"]
    assert any("secret internals" in (r.exc_text or "") for r in caplog.records)


def test_a_sandbox_refusal_is_403_naming_the_rule(raising_client, api_error):
    error = api_error(raising_client.get("/api/v1/refused"), 403, "sandbox_refused")
    assert "sandbox.http.allowed_domains" in error["message"]


def test_provider_failure_is_502_and_timeout_504(raising_client, api_error):
    api_error(raising_client.get("/api/v1/provider-down"), 502, "provider_error")
    api_error(raising_client.get("/api/v1/provider-slow"), 504, "provider_timeout")


# Sandbox whitelist ----------------------------------------------------------------------------


def test_whitelist_crud_takes_effect_in_storage_at_once(runtime, client, api_error):
    created = client.post(
        "/api/v1/sandbox/whitelist", json={"kind": "http", "value": "api.example.com", "note": "n"}
    )
    assert created.status_code == 201
    assert created.get_json()["value"] == "api.example.com"
    assert [e.value for e in runtime.storage.whitelist.list("http")] == ["api.example.com"]
    client.post("/api/v1/sandbox/whitelist", json={"kind": "shell", "value": "git status"})
    client.post("/api/v1/sandbox/whitelist", json={"kind": "file", "value": "/srv/data"})
    listed = client.get("/api/v1/sandbox/whitelist").get_json()
    assert sorted(e["kind"] for e in listed["items"]) == ["file", "http", "shell"]
    assert listed["config"] == {"file": [], "shell": [], "http": []}
    only = client.get("/api/v1/sandbox/whitelist?kind=shell").get_json()["items"]
    assert [e["value"] for e in only] == ["git status"]
    api_error(
        client.post("/api/v1/sandbox/whitelist", json={"kind": "http", "value": "api.example.com"}),
        409,
        "conflict",
    )
    response = client.delete("/api/v1/sandbox/whitelist?kind=http&value=api.example.com")
    assert response.status_code == 204 and response.data == b""
    assert runtime.storage.whitelist.list("http") == []
    api_error(client.delete("/api/v1/sandbox/whitelist?kind=http&value=api.example.com"), 404)


def test_whitelist_lists_config_entries_read_only(make_runtime):
    from oryxos_web import create_app

    runtime = make_runtime(
        config="sandbox:\n  http: {allowed_domains: ['*.example.org']}\n"
        "  shell: {allowed_commands: [ls]}\n"
    )
    listed = create_app(runtime).test_client().get("/api/v1/sandbox/whitelist").get_json()
    assert listed["config"] == {"file": [], "shell": ["ls"], "http": ["*.example.org"]}


def test_blank_whitelist_value_is_422(client, api_error):
    api_error(client.post("/api/v1/sandbox/whitelist", json={"kind": "file", "value": "  "}), 422)


# Audit ------------------------------------------------------------------------------------------


@pytest.fixture
def audited(runtime):
    audit = runtime.storage.audit
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(7):
        audit.record_tool_invocation(
            ToolInvocationRecord(
                tool_name="read_file" if i % 2 else "http_get",
                input={"path": f"/x/{i}"},
                success=i != 3,
                session_id="s1" if i < 4 else "s2",
                agent="alpha" if i < 5 else "beta",
                created_at=base + timedelta(hours=i),
            )
        )
        audit.record_llm_call(
            LlmCallRecord(
                provider="deepseek" if i < 6 else "local",
                model="m",
                success=i != 2,
                session_id="s1" if i < 4 else "s2",
                agent="alpha",
                total_tokens=10 * i,
                created_at=base + timedelta(hours=i),
            )
        )
    return base


def test_tool_audit_filters(client, audited):
    def get(query):
        body = client.get("/api/v1/audit/tool-invocations?" + query).get_json()
        return body["total"], [item["input"]["path"] for item in body["items"]]

    assert get("")[0] == 7
    assert get("session_id=s1")[0] == 4
    assert get("agent=beta")[0] == 2
    assert get("tool=read_file")[0] == 3
    assert get("success=false") == (1, ["/x/3"])
    assert get("since=2026-01-01T02:00:00Z&until=2026-01-01T04:00:00Z")[0] == 2
    assert get("session_id=s1&tool=read_file&success=true") == (1, ["/x/1"])


def test_tool_audit_paginates_newest_first(client, audited):
    first = client.get("/api/v1/audit/tool-invocations?limit=3").get_json()
    second = client.get("/api/v1/audit/tool-invocations?limit=3&offset=3").get_json()
    assert (first["total"], first["limit"], first["offset"]) == (7, 3, 0)
    paths = [i["input"]["path"] for i in first["items"] + second["items"]]
    assert paths == ["/x/6", "/x/5", "/x/4", "/x/3", "/x/2", "/x/1"]


def test_llm_audit_filters(client, audited):
    body = client.get("/api/v1/audit/llm-calls?provider=deepseek&success=true").get_json()
    assert body["total"] == 5
    assert {i["provider"] for i in body["items"]} == {"deepseek"}
    assert client.get("/api/v1/audit/llm-calls?session_id=s2").get_json()["total"] == 3


# Notify channels -------------------------------------------------------------------------------


def test_notify_channel_crud_never_shows_the_secret(runtime, client, api_error):
    created = client.post(
        "/api/v1/notify-channels",
        json={
            "name": "ops",
            "type": "recorder",
            "url": "https://hooks.example.com/x",
            "secret": "s3cr3t-value",
        },
    )
    assert created.status_code == 201
    assert created.get_json()["has_secret"] is True
    listed = client.get("/api/v1/notify-channels")
    assert b"s3cr3t-value" not in listed.data and b"s3cr3t-value" not in created.data
    assert "recorder" in listed.get_json()["types"]
    assert [c["name"] for c in listed.get_json()["items"]] == ["ops"]
    updated = client.put(
        "/api/v1/notify-channels/ops", json={"description": "on call", "url": None}
    )
    assert updated.status_code == 200
    assert updated.get_json()["description"] == "on call"
    assert updated.get_json()["url"] == "https://hooks.example.com/x"
    assert runtime.storage.notify_channels.get("ops").secret == "s3cr3t-value"
    assert client.get("/api/v1/notify-channels/ops").get_json()["description"] == "on call"
    api_error(
        client.post(
            "/api/v1/notify-channels",
            json={"name": "ops", "type": "recorder", "url": "https://a.example.com"},
        ),
        409,
    )
    assert client.delete("/api/v1/notify-channels/ops").status_code == 204
    api_error(client.get("/api/v1/notify-channels/ops"), 404)
    api_error(client.delete("/api/v1/notify-channels/ops"), 404)
    api_error(client.put("/api/v1/notify-channels/ops", json={"description": "x"}), 404)


def test_notify_channel_needs_a_registered_type_and_an_http_url(client, api_error):
    error = api_error(
        client.post(
            "/api/v1/notify-channels",
            json={"name": "x", "type": "pigeon", "url": "https://a.example.com"},
        ),
        422,
    )
    assert "pigeon" in error["message"] and "recorder" in error["message"]
    api_error(
        client.post(
            "/api/v1/notify-channels", json={"name": "x", "type": "recorder", "url": "file:///etc"}
        ),
        422,
        "validation_failed",
    )
    api_error(
        client.post(
            "/api/v1/notify-channels",
            json={"name": "../x", "type": "recorder", "url": "https://a.example.com"},
        ),
        422,
    )


def test_notify_send_test_uses_the_adapter(client, recorder, api_error):
    for name, url in (("ok", "https://a.example.com/in"), ("bad", "https://a.example.com/fail")):
        client.post("/api/v1/notify-channels", json={"name": name, "type": "recorder", "url": url})
    sent = client.post("/api/v1/notify-channels/ok/test", json={"content": "hello"})
    assert sent.get_json() == {"channel": "ok", "delivered": True, "detail": None}
    failed = client.post("/api/v1/notify-channels/bad/test", json={})
    assert failed.get_json()["delivered"] is False
    assert recorder.sent == [("ok", "hello"), ("bad", "OryxOS test message")]
    api_error(client.post("/api/v1/notify-channels/none/test", json={}), 404)


# Sessions (storage side; turns are tested with the loop) -----------------------------------------


@pytest.fixture
def stored_sessions(runtime):
    sessions = runtime.storage.sessions
    for i, agent in enumerate(["alpha", "alpha", "beta"]):
        sessions.save(
            SessionRecord(
                session_id=f"sess-{i}",
                profile_name=agent,
                channel="rest",
                user_id="u",
                messages=[{"role": "user", "content": f"hi {i}"}],
            )
        )
    return sessions


def test_session_list_get_and_archive(client, stored_sessions, api_error):
    listed = client.get("/api/v1/sessions").get_json()
    assert listed["total"] == 3
    assert client.get("/api/v1/sessions?agent=alpha").get_json()["total"] == 2
    assert client.get("/api/v1/sessions?limit=1&offset=1").get_json()["items"][0]["session_id"]
    one = client.get("/api/v1/sessions/sess-2").get_json()
    assert one["agent"] == "beta" and one["messages"] == [{"role": "user", "content": "hi 2"}]
    assert one["message_count"] == 1 and one["status"] == "active"
    assert client.delete("/api/v1/sessions/sess-2").status_code == 204
    assert client.get("/api/v1/sessions/sess-2").get_json()["status"] == "archived"
    assert client.get("/api/v1/sessions?status=archived").get_json()["total"] == 1
    api_error(client.delete("/api/v1/sessions/nope"), 404)
    api_error(client.get("/api/v1/sessions?status=gone"), 422)


def test_message_to_an_archived_session_is_409(client, stored_sessions, api_error):
    client.delete("/api/v1/sessions/sess-0")
    api_error(client.post("/api/v1/sessions/sess-0/messages", json={"message": "hi"}), 409)
    api_error(client.post("/api/v1/sessions/none/messages", json={"message": "hi"}), 404)
    api_error(client.post("/api/v1/sessions/sess-1/messages", json={"message": ""}), 422)


# Tools and memory --------------------------------------------------------------------------------


def test_tools_lists_the_catalog(make_runtime):
    from oryxos_web import create_app

    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    runtime = make_runtime(
        inline_plugin(
            "loud",
            oryxos_register_tools=lambda catalog: catalog.register(
                shout, groups=["fun"], available="is_interactive"
            ),
        )
    )
    items = create_app(runtime).test_client().get("/api/v1/tools").get_json()["items"]
    shout_item = next(i for i in items if i["name"] == "shout")
    assert shout_item == {
        "name": "shout",
        "description": "Upper-case the text.",
        "groups": ["fun"],
        "plugin": "loud",
        "available": False,
        "reason": "is_interactive is false",
    }


def test_memory_lists_the_configured_backends_entries(make_runtime):
    from oryxos_web import create_app

    from oryxos.memory import MemoryEntry

    class Notes:
        def __init__(self, runtime):
            pass

        def entries(self):
            return [MemoryEntry("2026-01-01 10:00", "likes tea")]

    runtime = make_runtime(
        inline_plugin("notes", oryxos_register_memory=lambda register: register("notes", Notes)),
        config="memory:\n  backend: notes\n",
    )
    body = create_app(runtime).test_client().get("/api/v1/memory").get_json()
    assert body == {
        "backend": "notes",
        "entries": [{"saved_at": "2026-01-01 10:00", "text": "likes tea"}],
    }


def test_memory_without_a_memory_backend_is_empty(make_runtime):
    from oryxos_web import create_app

    runtime = make_runtime(config="memory:\n  backend: none-such\n")
    body = create_app(runtime).test_client().get("/api/v1/memory").get_json()
    assert body == {"backend": None, "entries": []}


def test_whitelist_edits_apply_to_the_sandbox_at_once(runtime, client):
    from oryxos.sandbox import SandboxViolation

    sandbox = runtime.sandbox
    with pytest.raises(SandboxViolation):
        sandbox.check_url("https://api.example.com/v1")
    client.post("/api/v1/sandbox/whitelist", json={"kind": "http", "value": "*.example.com"})
    sandbox.check_url("https://api.example.com/v1")  # no restart, no reload
    client.delete("/api/v1/sandbox/whitelist?kind=http&value=*.example.com")
    with pytest.raises(SandboxViolation):
        sandbox.check_url("https://api.example.com/v1")


def test_a_secret_read_from_the_environment_shows_its_variable_only(client, monkeypatch):
    monkeypatch.setenv("OPS_HOOK_SECRET", "value-never-shown")
    created = client.post(
        "/api/v1/notify-channels",
        json={
            "name": "ops",
            "type": "recorder",
            "url": "https://hooks.example.com/x",
            "secret": "${OPS_HOOK_SECRET}",
        },
    ).get_json()
    assert created["has_secret"] is True and created["secret_variable"] == "${OPS_HOOK_SECRET}"
    sent = client.post("/api/v1/notify-channels/ops/test", json={}).get_json()
    assert sent["delivered"] is True
    assert b"value-never-shown" not in client.get("/api/v1/notify-channels").data


def test_memory_shows_what_the_memory_plugin_saved(runtime, client):
    runtime.memory.save("The user prefers tea.", agent="default")
    body = client.get("/api/v1/memory").get_json()
    assert body["backend"] == runtime.config.memory.backend
    assert [e["text"] for e in body["entries"]][-1] == "The user prefers tea."
