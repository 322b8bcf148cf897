"""Built-in web plugin: the REST API (``/api/v1``), the web console, ``oryxos serve`` and
``oryxos gateway``.

Importing this module is free: flask and waitress are imported only by the functions that build
the application or serve it. Other plugins add routes through this plugin's own hook,
``oryxos_web_routes(app, api, runtime)`` (see :mod:`oryxos_web.hookspecs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oryxos import hookimpl

if TYPE_CHECKING:
    import click


def create_app(runtime: Any) -> Any:
    """The Flask application for one runtime (API, console and plugin routes)."""
    from oryxos_web.app import create_app as build

    return build(runtime)


@hookimpl
def oryxos_addhooks(pluginmanager: Any) -> None:
    from oryxos_web import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def oryxos_register_commands(cli: click.Group) -> None:
    from oryxos_web.commands import gateway, serve

    cli.add_command(serve)
    cli.add_command(gateway)
