"""``oryxos mcp list|tools``: what the configured MCP servers are doing and what they offer."""

from __future__ import annotations

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.errors import OryxError


class ServerFailed(OryxError):
    """The server named on the command line did not start (exit code 1)."""


def _manager(state: CliState):  # type: ignore[no-untyped-def]
    from oryxos_mcp.manager import close_manager, manager_for

    runtime = state.runtime()
    manager = manager_for(runtime.config)
    click.get_current_context().call_on_close(lambda: close_manager(runtime.config))
    return manager


@click.group()
def mcp() -> None:
    """MCP servers from .oryxos/mcp_servers.yaml (see docs/mcp.md)."""


@mcp.command("list")
@json_option
@pass_state
def list_servers(state: CliState, as_json: bool) -> None:
    """Start every configured server (in parallel) and show its state and tool count."""
    manager = _manager(state)
    manager.start_all()
    rows = manager.report()
    if as_json:
        echo_json({"file": manager.file, "servers": rows})
        return
    if not rows:
        click.echo(f"no MCP servers configured in {manager.file}")
        return
    click.echo(
        table(
            [
                [
                    row["name"],
                    row["transport"],
                    row["state"],
                    "-" if row["tools"] is None else str(row["tools"]),
                    row["error"] or "",
                ]
                for row in rows
            ],
            ["name", "transport", "state", "tools", "detail"],
        )
    )


@mcp.command("tools")
@click.argument("server")
@json_option
@pass_state
def list_tools(state: CliState, server: str, as_json: bool) -> None:
    """Start SERVER and list its tools (name and description)."""
    from oryxos_mcp.server import ServerUnavailable

    manager = _manager(state)
    try:
        running = manager.start_one(server)
    except ServerUnavailable as err:
        raise ServerFailed(str(err)) from None
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in running.tools
    ]
    if as_json:
        echo_json({"server": server, "tools": tools})
        return
    if not tools:
        click.echo(f"MCP server {server!r} lists no tools")
        return
    click.echo(
        table(
            [[t["name"], (t["description"].strip().splitlines() or [""])[0][:90]] for t in tools],
            ["tool", "description"],
        )
    )
