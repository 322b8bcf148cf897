"""The API's one error shape, ``{"error": {"code", "message", "details"}}``, and the mapping
from OryxOS errors and HTTP exceptions to status codes.

Every failure under ``/api/v1`` — bad JSON, a failed validation, an unknown resource, a provider
that timed out, a bug — is answered with that shape and the right status, never with an HTML
page or a traceback (tracebacks go to the log).
"""

from __future__ import annotations

import logging
from typing import Any

from oryxos.errors import OryxError

log = logging.getLogger("oryxos.web")

#: OryxError class names (anywhere in the class's MRO) → (status, code). Matched by name so
#: that errors defined by other kernel modules and plugins (the sandbox's SandboxViolation,
#: the providers' errors) map without this plugin importing them.
ERROR_STATUS: list[tuple[str, int, str]] = [
    ("NotFoundError", 404, "not_found"),
    ("ConflictError", 409, "conflict"),
    ("SandboxViolation", 403, "sandbox_refused"),
    ("ProviderTimeoutError", 504, "provider_timeout"),
    ("ProviderTimeout", 504, "provider_timeout"),
    ("ProviderError", 502, "provider_error"),
    ("WorkspaceError", 500, "workspace_error"),
    ("StorageError", 503, "storage_unavailable"),
    ("StartupError", 500, "startup_error"),
    ("ConfigError", 500, "config_error"),
    ("FileProblemError", 422, "invalid_file"),
    ("UsageError", 422, "invalid_request"),
]


class ApiError(Exception):
    """An error with its HTTP status, stable code, message and optional details."""

    def __init__(self, status: int, code: str, message: str, details: Any = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "details": self.details}}


def from_oryx_error(err: OryxError) -> ApiError:
    """The status and code of an OryxError, found by class name along its MRO."""
    names = [cls.__name__ for cls in type(err).__mro__]
    for name in names:
        for class_name, status, code in ERROR_STATUS:
            if name == class_name:
                details = None
                problems = getattr(err, "problems", None)
                if problems:
                    details = [
                        {"file": p.file, "key": p.key, "line": p.line, "message": p.message}
                        for p in problems
                    ]
                return ApiError(status, code, str(err), details)
    # an OryxError is meant for people: its message is safe to show
    return ApiError(500, "operation_failed", str(err))


def http_code(name: str) -> str:
    """``"Method Not Allowed"`` → ``"method_not_allowed"``."""
    return "_".join(name.lower().replace("-", " ").split())


def from_http_exception(exc: Any) -> ApiError:
    """A werkzeug HTTPException (404 of an unknown URL, 405, 413 ...) as an ApiError."""
    status = exc.code or 500
    messages = {
        404: "no such endpoint",
        405: "method not allowed for this endpoint",
        413: "request body too large",
    }
    return ApiError(status, http_code(exc.name), messages.get(status, exc.description or exc.name))


def from_validation_error(err: Any, where: str) -> ApiError:
    """A pydantic ValidationError on the request body or query as a 422 naming each field."""
    details = []
    for item in err.errors(include_url=False, include_context=False, include_input=False):
        loc = ".".join(str(part) for part in item["loc"])
        details.append({"field": f"{where}.{loc}" if loc else where, "message": item["msg"]})
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5])
    return ApiError(422, "validation_failed", f"invalid {where}: {summary}", details)


def internal_error(err: BaseException) -> ApiError:
    """A bug: logged with its traceback, answered without one."""
    log.error("internal error while serving a request", exc_info=err)
    return ApiError(500, "internal_error", "internal server error (see the server log)")
