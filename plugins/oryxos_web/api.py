"""The route registry: each ``/api/v1`` endpoint declared once, with its pydantic models.

``@api.route("POST", "/sessions", body=CreateSession, response=Session, status=201)`` registers
a view; the registry validates the JSON body and the query string with those models (400 for
malformed JSON, 422 for invalid fields), serialises the returned model, and generates the OpenAPI
3.1 document from the very same models (:meth:`Api.openapi`), so the document cannot drift from
the code. Paths are written in OpenAPI style (``/sessions/{session_id}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from oryxos_web.errors import ApiError, from_validation_error

PREFIX = "/api/v1"
_PARAM = re.compile(r"\{(\w+)\}")

#: Short descriptions of the error statuses an endpoint may answer.
STATUS_TEXT = {
    400: "Malformed request (the body is not JSON)",
    401: "Missing bearer token",
    403: "Wrong bearer token, or refused by the sandbox",
    404: "Unknown resource",
    409: "Conflict with what is stored",
    413: "Request body too large",
    422: "Validation failed",
    502: "The model provider failed",
    503: "Not available: database down, or the provider is not configured",
    504: "The model provider timed out",
}


class ErrorBody(BaseModel):
    """What went wrong: a stable machine code, a message for people, optional details."""

    code: str
    message: str
    details: Any = None


class ErrorResponse(BaseModel):
    """The one error shape of the API."""

    error: ErrorBody


@dataclass
class Endpoint:
    """One declared endpoint."""

    method: str
    path: str
    view: Callable[..., Any]
    summary: str
    tag: str
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    status: int = 200
    errors: tuple[int, ...] = ()
    public: bool = False  # no bearer token needed (health only)
    #: The view returns an iterator of Server-Sent Events text (``text/event-stream``).
    stream: bool = False

    @property
    def flask_rule(self) -> str:
        return PREFIX + _PARAM.sub(r"<\1>", self.path)

    @property
    def endpoint_name(self) -> str:
        return "api." + self.view.__name__


@dataclass
class Api:
    """The registry of ``/api/v1`` endpoints of one application."""

    endpoints: list[Endpoint] = field(default_factory=list)

    def route(
        self,
        method: str,
        path: str,
        *,
        summary: str,
        tag: str = "misc",
        body: type[BaseModel] | None = None,
        query: type[BaseModel] | None = None,
        response: type[BaseModel] | None = None,
        status: int = 200,
        errors: tuple[int, ...] = (),
        public: bool = False,
        stream: bool = False,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare an endpoint; the view gets path parameters, ``body=`` and ``query=``.

        With ``stream=True`` the view returns an iterator of Server-Sent Events text; errors
        raised before it returns are answered as JSON with their status, as everywhere.
        """

        def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
            self.endpoints.append(
                Endpoint(
                    method.upper(),
                    path,
                    view,
                    summary,
                    tag,
                    body,
                    query,
                    response,
                    status,
                    tuple(errors),
                    public,
                    stream,
                )
            )
            return view

        return decorate

    def public_rules(self) -> set[tuple[str, str]]:
        """(method, Flask rule) of the endpoints that need no token."""
        return {(e.method, e.flask_rule) for e in self.endpoints if e.public}

    def install(self, app: Any) -> None:
        """Add every endpoint to a Flask application."""
        for ep in self.endpoints:
            app.add_url_rule(
                ep.flask_rule,
                endpoint=f"api.{ep.method.lower()}.{ep.view.__name__}",
                view_func=_make_view(ep),
                methods=[ep.method],
            )

    def openapi(self, *, title: str, version: str, auth: bool) -> dict[str, Any]:
        """The OpenAPI 3.1 document of every endpoint (see :mod:`oryxos_web.openapi`)."""
        from oryxos_web.openapi import build_document

        return build_document(self.endpoints, title=title, version=version, auth=auth)


def _read_body(model: type[BaseModel]) -> BaseModel:
    from flask import request

    raw = request.get_data(cache=True)  # MAX_CONTENT_LENGTH → 413 before reading
    if raw.strip():
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as err:
            raise ApiError(
                400, "malformed_json", f"the request body is not valid JSON: {err}"
            ) from None
    else:
        payload = {}
    if not isinstance(payload, dict):
        raise ApiError(422, "validation_failed", "the request body must be a JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as err:
        raise from_validation_error(err, "body") from None


def _read_query(model: type[BaseModel]) -> BaseModel:
    from flask import request

    args = {key: request.args.get(key) for key in request.args}
    try:
        return model.model_validate(args)
    except ValidationError as err:
        raise from_validation_error(err, "query") from None


def _make_view(ep: Endpoint) -> Callable[..., Any]:
    def view(**path_args: Any) -> Any:
        from flask import Response

        kwargs = dict(path_args)
        if ep.query is not None:
            kwargs["query"] = _read_query(ep.query)
        if ep.body is not None:
            kwargs["body"] = _read_body(ep.body)
        result = ep.view(**kwargs)
        if ep.stream:
            from oryxos_web.turns import event_stream_response

            return event_stream_response(result)
        if ep.status == 204 or result is None:
            return Response(status=204)
        if isinstance(result, BaseModel):
            text = result.model_dump_json()  # pydantic-core: faster than dump + json.dumps
        else:
            text = json.dumps(result, ensure_ascii=False)
        return Response(text, status=ep.status, mimetype="application/json")

    view.__name__ = ep.view.__name__
    view.__doc__ = ep.view.__doc__
    return view
