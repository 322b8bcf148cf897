"""The OpenAPI 3.1 document: valid, generated, and describing every /api/v1 route."""

from __future__ import annotations

import re

from openapi_spec_validator import validate

from oryxos.testing import inline_plugin


def _doc(client):
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    return response.get_json()


def _flask_api_routes(app):
    routes = set()
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            routes.add((method.lower(), path))
    return routes


def test_the_document_is_valid_openapi_3_1(client):
    doc = _doc(client)
    assert doc["openapi"].startswith("3.1")
    validate(doc)


def test_every_flask_route_under_api_v1_is_described(app, client):
    doc = _doc(client)
    described = {(m, p) for p, ops in doc["paths"].items() for m in ops}
    routes = _flask_api_routes(app)
    assert routes and routes == described
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            assert op["summary"] and op["responses"], (method, path)


def test_request_and_response_models_come_from_pydantic(client):
    from oryxos_web.models import CreateSession

    doc = _doc(client)
    op = doc["paths"]["/api/v1/sessions"]["post"]
    ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert ref == "#/components/schemas/CreateSession"
    schema = doc["components"]["schemas"]["CreateSession"]
    assert set(schema["properties"]) == set(CreateSession.model_fields)
    assert "201" in op["responses"] and "422" in op["responses"]
    error = doc["components"]["schemas"]["ErrorResponse"]
    assert error["properties"]["error"]["$ref"] == "#/components/schemas/ErrorBody"


def test_query_models_become_parameters(client):
    doc = _doc(client)
    params = doc["paths"]["/api/v1/audit/tool-invocations"]["get"]["parameters"]
    names = {p["name"] for p in params}
    assert {"session_id", "agent", "tool", "success", "since", "until", "limit", "offset"} == names


def test_routes_added_by_plugins_are_described(make_runtime):
    from oryxos_web import create_app
    from pydantic import BaseModel

    class Pong(BaseModel):
        pong: bool

    def routes(app, api, runtime):
        @api.route("GET", "/ping", summary="Ping", response=Pong, tag="extra")
        def ping():
            return Pong(pong=True)

    app = create_app(make_runtime(inline_plugin("pinger", oryxos_web_routes=routes)))
    doc = _doc(app.test_client())
    validate(doc)
    assert doc["paths"]["/api/v1/ping"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"
    ] == {"$ref": "#/components/schemas/Pong"}
    assert _flask_api_routes(app) == {(m, p) for p, ops in doc["paths"].items() for m in ops}
