"""The MCP client plugin: servers from ``.oryxos/mcp_servers.yaml``, their tools in the catalog.

Each stdio server is started as a subprocess (the mcp SDK, on one shared event loop); every
tool it lists becomes a catalog tool with its declared name, in the group ``mcp:<server>``.
An agent gets a server's tools by listing the server under ``mcp_servers:`` in its AGENT.md
(``Profile.wanted_tools()`` adds ``@mcp:<server>``), or by naming single tools under ``tools:``.
See docs/mcp.md. This module imports only the standard library and ``oryxos``: mcp (≈ 0.6 s)
is imported when a server starts.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from oryxos import hookimpl

if TYPE_CHECKING:
    import click

    from oryxos.catalog import ToolCatalog
    from oryxos.config import Config
    from oryxos.runtime import Runtime
    from oryxos.status import StatusSection


@hookimpl
def oryxos_register_tools(catalog: ToolCatalog, config: Config) -> None:
    """Start the configured servers (in parallel) and register their tools."""
    from oryxos_mcp.manager import manager_for

    manager = manager_for(config)
    if manager.servers:
        manager.start_all()
        manager.register(catalog)
    else:
        for warning in manager.config.warnings:  # skipped http/sse entries
            logging.getLogger("oryxos.mcp").warning("%s", warning)


@hookimpl
def oryxos_register_commands(cli: click.Group) -> None:
    from oryxos_mcp.commands import mcp

    cli.add_command(mcp)


@hookimpl
def oryxos_status(runtime: Runtime) -> StatusSection | None:
    """Each configured server: state, tool count, restarts, and why it failed."""
    from oryxos_mcp.manager import status_section

    return status_section(runtime.config)


@hookimpl
def oryxos_shutdown(runtime: Runtime) -> None:
    """Stop every server of this runtime (no orphan processes)."""
    from oryxos_mcp.manager import close_manager

    close_manager(runtime.config)
