"""Fixtures for the web plugin's tests: a runtime with optional inline plugins and its app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from oryxos.plugins import get_plugin_manager
from oryxos.runtime import Runtime
from oryxos.testing import inline_plugin, use_model_server


class Recorder:
    """A notify adapter (the ``deliver`` contract of oryxos.notify) that records what it was
    asked to send; a URL ending in /fail is refused by the "vendor"."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def deliver(self, channel: Any, content: str, *, secret: Any, timeout: float) -> Any:
        try:  # the kernel's verdict type, once the notify service is there
            from oryxos.notify import Delivery
        except ImportError:
            from types import SimpleNamespace as Delivery

        self.sent.append((channel.name, content))
        if channel.url.endswith("/fail"):
            return Delivery(ok=False, detail="vendor said no", retryable=False)
        return Delivery(ok=True, detail="", retryable=False)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_runtime(oryxos_workspace, recorder) -> Callable[..., Runtime]:
    """A runtime on the test workspace with every installed plugin, a "recorder" notify adapter type
    that records, and the inline plugins given."""
    from oryxos.testing import inline_plugin

    made: list[Runtime] = []

    def make(*plugins: tuple[str, object], config: str | None = None) -> Runtime:
        if config is not None:
            oryxos_workspace.config_file.write_text(config)
        notify = inline_plugin(
            "test-notify",
            oryxos_register_notify_adapters=lambda register: register("recorder", recorder),
        )
        pm = get_plugin_manager(plugins=[notify, *plugins], environ={})
        runtime = Runtime.load(oryxos_workspace, pm)
        made.append(runtime)
        return runtime

    yield make
    for runtime in made:
        runtime.close()


@pytest.fixture
def runtime(make_runtime) -> Runtime:
    return make_runtime()


@pytest.fixture
def app(runtime) -> Any:
    from oryxos_web import create_app

    return create_app(runtime)


@pytest.fixture
def client(app) -> Any:
    return app.test_client()


def assert_error(response: Any, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the API's JSON error shape with this status (and code)."""
    assert response.status_code == status, response.data
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert "Traceback" not in response.get_data(as_text=True)
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]


@pytest.fixture
def api_error() -> Callable[..., dict[str, Any]]:
    return assert_error


def _shout(catalog):
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    catalog.register(shout)


@pytest.fixture
def turn_app(oryxos_workspace, oryxos_model_server, make_runtime):
    from oryxos_web import create_app

    def make(**provider_settings):
        use_model_server(
            oryxos_workspace, oryxos_model_server, **{"max_retries": 0, **provider_settings}
        )
        agent = oryxos_workspace.agents_dir / "loud"
        (agent / "skills").mkdir(parents=True, exist_ok=True)
        (agent / "AGENT.md").write_text(
            "---\nname: loud\ndescription: Shouts.\nprovider: {name: default}\n"
            "tools: [shout]\n---\nShout when asked.\n"
        )
        runtime = make_runtime(inline_plugin("shouter", oryxos_register_tools=_shout))
        return runtime, create_app(runtime).test_client()

    return make
