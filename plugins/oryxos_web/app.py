"""The Flask application factory: API, console, plugin routes, auth and error handling."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from oryxos import __version__
from oryxos.errors import OryxError
from oryxos_web import auth
from oryxos_web.api import PREFIX, Api
from oryxos_web.errors import (
    ApiError,
    from_http_exception,
    from_oryx_error,
    internal_error,
)

log = logging.getLogger("oryxos.web")
#: WSGI environ key holding the request's start (time.perf_counter()), set by the server.
STARTED_KEY = "oryxos.started"
access_log = logging.getLogger("oryxos.web.access")


def create_app(runtime: Any) -> Any:
    """A Flask application serving ``runtime``: ``/api/v1``, the console at ``/``, and the
    routes other plugins add through ``oryxos_web_routes``."""
    from flask import Flask

    app = Flask("oryxos_web", static_folder="static", template_folder="templates")
    token = auth.api_token(runtime)
    app.config.update(
        MAX_CONTENT_LENGTH=runtime.config.server.max_body_bytes,
        SECRET_KEY=auth.signing_key(runtime, token),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_NAME="oryxos_console",
        JSON_SORT_KEYS=False,
    )
    app.extensions["oryxos"] = {"runtime": runtime, "token": token}
    app.session_interface = _console_sessions()

    api = Api()
    from oryxos_web import routes

    routes.declare(api, runtime)

    @api.route("GET", "/openapi.json", summary="This API's OpenAPI 3.1 document", tag="system")
    def openapi() -> dict[str, Any]:
        """Generated from the same pydantic models that validate requests."""
        return api.openapi(title="OryxOS", version=__version__, auth=token is not None)

    runtime.pm.hook.oryxos_web_routes(app=app, api=api, runtime=runtime)
    api.install(app)
    app.extensions["oryxos"]["api"] = api

    from oryxos_web.console import console_blueprint

    app.register_blueprint(console_blueprint(runtime, token))

    _install_access_log(app)
    _install_auth(app, api, token)
    _install_errors(app)
    return app


def _console_sessions() -> Any:
    """Cookie sessions for the console only: the API is stateless (bearer token), so its
    requests skip cookie parsing and signature checks altogether."""
    from flask.sessions import SecureCookieSessionInterface

    class ConsoleSessions(SecureCookieSessionInterface):
        def open_session(self, app: Any, request: Any) -> Any:
            if _is_api(request.path):
                return self.make_null_session(app)
            return super().open_session(app, request)

    return ConsoleSessions()


def _is_api(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def _install_auth(app: Any, api: Api, token: str | None) -> None:
    from flask import request

    public = {PREFIX + "/health"}
    if token is None:
        return  # nothing to check: no per-request cost

    @app.before_request
    def require_token() -> Any:
        if not _is_api(request.path) or request.path in public:
            return None
        given = auth.bearer(request.headers.get("Authorization"))
        if given is None:
            err = ApiError(401, "unauthorized", "missing 'Authorization: Bearer <token>' header")
            return _error_response(err, {"WWW-Authenticate": "Bearer"})
        if not auth.token_matches(token, given):
            return _error_response(ApiError(403, "forbidden", "wrong bearer token"))
        return None


def _error_response(err: ApiError, headers: dict[str, str] | None = None) -> Any:
    from flask import Response

    response = Response(
        json.dumps(err.body(), ensure_ascii=False, default=str),
        status=err.status,
        mimetype="application/json",
    )
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def _install_errors(app: Any) -> None:
    from flask import request
    from werkzeug.exceptions import HTTPException

    from oryxos_web.console import console_error_page

    def render(err: ApiError, headers: dict[str, str] | None = None) -> Any:
        if _is_api(request.path):
            return _error_response(err, headers)
        return console_error_page(err)

    @app.errorhandler(ApiError)
    def api_error(err: ApiError) -> Any:
        return render(err)

    @app.errorhandler(OryxError)
    def oryx_error(err: OryxError) -> Any:
        converted = from_oryx_error(err)
        if converted.status >= 500:
            log.error("request failed: %s", err)
        return render(converted)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        headers = {}
        if exc.code == 405 and exc.valid_methods:  # type: ignore[attr-defined]
            headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
        return render(from_http_exception(exc), headers)

    @app.errorhandler(Exception)
    def any_error(err: Exception) -> Any:
        return render(internal_error(err))


def _install_access_log(app: Any) -> None:
    """One structured (JSON) access-log record per request, through OryxOS logging."""
    from flask import request

    quiet = PREFIX + "/health"

    @app.after_request
    def log_request(response: Any) -> Any:
        if request.path == quiet and response.status_code == 200:
            return response  # load-balancer probes would flood the log; failures are logged
        started = request.environ.get(STARTED_KEY)  # set by the server's InFlight wrapper
        duration = (time.perf_counter() - started) * 1000 if started else 0.0
        access_log.info(
            "%s %s %s",
            request.method,
            request.path,
            response.status_code,
            extra={
                "method": request.method,
                "path": request.path,
                "status": response.status_code,
                "duration_ms": round(duration, 2),
                "remote": request.remote_addr,
                # a streamed body is not known yet (and computing it would consume the stream)
                "bytes": None if response.is_streamed else response.calculate_content_length(),
            },
        )
        return response
