"""web_search against local fakes of the SearXNG and Brave Search JSON APIs."""

from __future__ import annotations

import pytest
from http_fakes import BRAVE_TOKEN


def test_without_a_backend_web_search_is_not_offered(env):
    catalog = env.runtime.catalog
    ctx = catalog.context(runtime=env.runtime, config=env.runtime.config)
    selection = catalog.select(["@http"], ctx)
    assert "web_search" not in selection.names
    assert selection.unavailable == {"web_search": "web_search_configured is false"}
    assert "http_get" in selection.names


def test_brave_without_its_key_variable_is_not_offered(make_env, monkeypatch):
    monkeypatch.delenv("BRAVE_KEY_FOR_TEST", raising=False)
    env = make_env(web_search={"backend": "brave", "api_key": "${BRAVE_KEY_FOR_TEST}"})
    ctx = env.runtime.catalog.context(runtime=env.runtime)
    assert "web_search" not in env.runtime.catalog.tool_names(["web_search"], ctx)


def test_searxng_backend(make_env, web):
    env = make_env(web_search={"backend": "searxng", "url": f"{web.base}/searxng"})
    ctx = env.runtime.catalog.context(runtime=env.runtime)
    assert env.runtime.catalog.tool_names(["web_search"], ctx) == ["web_search"]
    result = env.run("web_search", query="arabian oryx")
    assert result.success, result.error_message
    assert result.content.splitlines() == [
        "1. Arabian oryx",
        "   http://127.0.0.1/oryx",
        "   The Arabian oryx is a medium-sized antelope & more.",
        "2. Oryx - elsewhere",
        "   https://elsewhere.example/oryx",
        "   Another page about the oryx.",
        "   (not in the HTTP whitelist: fetching it will be refused)",
    ]
    _method, path, _headers, _body = web.requests[-1]
    assert path == "/searxng/search?q=arabian+oryx&format=json"


def test_brave_backend(make_env, web, monkeypatch):
    monkeypatch.setenv("BRAVE_KEY_FOR_TEST", BRAVE_TOKEN)
    env = make_env(
        web_search={
            "backend": "brave",
            "url": f"{web.base}/brave/res/v1/web/search",
            "api_key": "${BRAVE_KEY_FOR_TEST}",
            "max_results": 2,
        }
    )
    result = env.run("web_search", query="oryx")
    assert result.success, result.error_message
    lines = result.content.splitlines()
    assert lines[:3] == [
        "1. Arabian oryx - Wikipedia",
        "   http://127.0.0.1/wiki/oryx",
        "   The Arabian oryx is an antelope.",
    ]
    assert lines[3] == "2. Oryx conservation" and len([ln for ln in lines if ln[0].isdigit()]) == 2
    _m, path, headers, _b = web.requests[-1]
    assert path == "/brave/res/v1/web/search?q=oryx&count=2"
    assert headers["x-subscription-token"] == BRAVE_TOKEN
    assert len(env.run("web_search", query="oryx", count=3).content.splitlines()) >= 9


def test_brave_with_a_wrong_key_reports_the_status(make_env, web, monkeypatch):
    monkeypatch.setenv("BRAVE_KEY_FOR_TEST", "wrong")
    env = make_env(
        web_search={
            "backend": "brave",
            "url": f"{web.base}/brave/res/v1/web/search",
            "api_key": "${BRAVE_KEY_FOR_TEST}",
        }
    )
    result = env.run("web_search", query="oryx")
    assert not result.success and "Brave Search answered HTTP 401" in result.error_message
    assert "wrong" not in (result.error_message or "")


def test_the_backend_host_must_be_whitelisted(make_env, web):
    port = web.server_address[1]
    env = make_env(web_search={"backend": "searxng", "url": f"http://localhost:{port}/searxng"})
    result = env.run("web_search", query="oryx")
    assert not result.success and "sandbox.http.allowed_domains" in result.error_message


@pytest.mark.parametrize("backend", ["searxng", "brave"])
def test_config_rejects_unknown_keys_and_backends(make_env, backend):
    from oryxos.errors import ConfigError

    with pytest.raises(ConfigError, match="web_search"):
        make_env(web_search={"backend": backend + "x"})
