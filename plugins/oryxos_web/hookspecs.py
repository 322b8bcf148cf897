"""Hooks the web plugin defines for other plugins (added through ``oryxos_addhooks``)."""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("oryxos")


@hookspec
def oryxos_web_routes(app: Any, api: Any, runtime: Any) -> None:
    """Add HTTP routes to the web application while it is built.

    :param app: the Flask application: register a Blueprint (``app.register_blueprint(bp)``)
        or plain rules. Routes outside ``/api/v1`` are served as they are.
    :param api: the :class:`oryxos_web.api.Api` route registry: ``@api.route("GET", "/x",
        response=Model, summary=...)`` adds ``/api/v1/x`` with pydantic validation, the JSON
        error shape, the bearer-token check and an entry in the OpenAPI document.
    :param runtime: the :class:`oryxos.runtime.Runtime` the application serves.
    Called once per application, after the built-in routes (a clash is a startup error).
    """
