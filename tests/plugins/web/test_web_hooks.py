"""The web plugin's own hook: ``oryxos_web_routes``, documented and tested like kernel hooks."""

from __future__ import annotations

import inspect
from pathlib import Path

from oryxos_web import hookspecs

from oryxos.testing import inline_plugin

ROOT = Path(__file__).parents[3]


def test_hook_oryxos_web_routes(make_runtime):
    from flask import Blueprint
    from oryxos_web import create_app
    from pydantic import BaseModel

    class Echo(BaseModel):
        text: str

    seen = []

    def routes(app, api, runtime):
        seen.append(runtime)
        bp = Blueprint("hello_page", __name__)
        bp.add_url_rule("/hello", "hello", lambda: "hello from a plugin")
        app.register_blueprint(bp)

        @api.route("POST", "/echo", summary="Echo", body=Echo, response=Echo)
        def echo(body: Echo) -> Echo:
            return Echo(text=body.text.upper())

    runtime = make_runtime(inline_plugin("extra", oryxos_web_routes=routes))
    client = create_app(runtime).test_client()
    assert seen == [runtime]
    assert client.get("/hello").get_data(as_text=True) == "hello from a plugin"
    assert client.post("/api/v1/echo", json={"text": "hi"}).get_json() == {"text": "HI"}
    invalid = client.post("/api/v1/echo", json={})
    assert invalid.status_code == 422 and invalid.get_json()["error"]["code"] == "validation_failed"


def test_web_hooks_have_docs_sections_headed_by_their_signature():
    text = (ROOT / "docs/plugins.md").read_text().splitlines()
    for name, fn in vars(hookspecs).items():
        if name.startswith("oryxos_") and callable(fn):
            signature = f"### `{name}({', '.join(inspect.signature(fn).parameters)})`"
            assert signature in text, f"docs/plugins.md lacks the section {signature}"
            assert inspect.getdoc(fn)
