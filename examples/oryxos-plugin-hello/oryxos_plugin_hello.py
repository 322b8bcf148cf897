"""An example third-party OryxOS plugin: a ``hello`` tool and an ``oryxos hello`` command.

Only ``oryxos`` (the public API) and the standard library are imported at module level, so
loading the plugin costs nothing; click is already loaded by the CLI.
"""

from __future__ import annotations

from typing import Annotated, Any

from oryxos import hookimpl


def hello(name: Annotated[str, "who to greet"] = "world") -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    catalog.register(hello, groups=["hello"])


@hookimpl
def oryxos_register_commands(cli: Any) -> None:
    import click

    @cli.command(name="hello")
    @click.argument("name", default="world")
    def hello_command(name: str) -> None:
        """Say hello (from the oryxos-plugin-hello example)."""
        click.echo(hello(name))
