"""The OpenAPI 3.1 document, generated from the endpoints' pydantic models.

Nothing here is written by hand per route: paths, parameters, request bodies, responses and
component schemas all come from :class:`oryxos_web.api.Endpoint` declarations. pydantic emits
JSON Schema 2020-12, which is OpenAPI 3.1's own schema dialect.
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from oryxos_web.api import PREFIX, STATUS_TEXT, Endpoint, ErrorResponse

REF = "#/components/schemas/{model}"


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": REF.format(model=model.__name__)}


def _query_parameters(model: type[BaseModel], defs: dict[str, Any]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(ref_template=REF)
    params = []
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        prop = dict(prop)
        description = prop.pop("description", None)
        param: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": prop,
        }
        if description:
            param["description"] = description
        params.append(param)
    defs.update(schema.get("$defs", {}))
    return params


def _operation(ep: Endpoint, auth: bool, defs: dict[str, Any]) -> dict[str, Any]:
    doc = inspect.getdoc(ep.view) or ""
    op: dict[str, Any] = {
        "operationId": f"{ep.method.lower()}_{ep.view.__name__}",
        "summary": ep.summary,
        "tags": [ep.tag],
    }
    if doc:
        op["description"] = doc
    params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in _path_params(ep.path)
    ]
    if ep.query is not None:
        params += _query_parameters(ep.query, defs)
    if params:
        op["parameters"] = params
    if ep.body is not None:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(ep.body)}},
        }
    responses: dict[str, Any] = {}
    if ep.status == 204:
        responses["204"] = {"description": "Done (no content)"}
    elif ep.stream:
        responses[str(ep.status)] = {
            "description": ep.summary + " — Server-Sent Events (see the operation's description)",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    else:
        schema = _ref(ep.response) if ep.response else {"type": "object"}
        responses[str(ep.status)] = {
            "description": ep.summary,
            "content": {"application/json": {"schema": schema}},
        }
    statuses = set(ep.errors)
    if ep.body is not None:
        statuses |= {400, 413, 422}
    if ep.query is not None:
        statuses.add(422)
    if auth and not ep.public:
        statuses |= {401, 403}
    statuses.add(500)
    for status in sorted(statuses):
        responses[str(status)] = {
            "description": STATUS_TEXT.get(status, "Internal error"),
            "content": {"application/json": {"schema": _ref(ErrorResponse)}},
        }
    op["responses"] = responses
    if auth and not ep.public:
        op["security"] = [{"bearer": []}]
    elif auth:
        op["security"] = []
    return op


def _path_params(path: str) -> list[str]:
    import re

    return re.findall(r"\{(\w+)\}", path)


def build_document(
    endpoints: list[Endpoint], *, title: str, version: str, auth: bool
) -> dict[str, Any]:
    """The whole document for these endpoints."""
    models: set[type[BaseModel]] = {ErrorResponse}
    for ep in endpoints:
        for model in (ep.body, ep.response):
            if model is not None:
                models.add(model)
    ordered = sorted(models, key=lambda m: m.__name__)
    _, schemas = models_json_schema([(m, "validation") for m in ordered], ref_template=REF)
    defs: dict[str, Any] = dict(schemas.get("$defs", {}))
    paths: dict[str, dict[str, Any]] = {}
    for ep in endpoints:
        paths.setdefault(PREFIX + ep.path, {})[ep.method.lower()] = _operation(ep, auth, defs)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": title,
            "version": version,
            "description": "The OryxOS REST API. Errors are always "
            '`{"error": {"code", "message", "details"}}`.',
        },
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(defs.items()))},
    }
    if auth:
        doc["components"]["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer", "description": "server.api_token"}
        }
    return doc
