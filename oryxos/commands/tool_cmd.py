"""``oryxos tool list|run``: the tool catalog, and running one tool as an agent would.

``tool run`` goes through the same ToolExecutor as the agent loop — sandbox, schema validation,
plugin hooks and the audit row — so it is the way to check what a tool does and what the
sandbox allows. Exit codes: 0 success, 1 the tool failed or was refused, 2 bad input.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.errors import EXIT_FAILURE, NotFoundError, UsageError

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext
    from oryxos.runtime import Runtime

AGENT_OPTION = click.option(
    "--agent", "agent_name", metavar="NAME", help="As this agent: its tools and skill folders."
)


def _profile(runtime: Runtime, name: str | None) -> Any:
    """The agent's profile (from runtime.agents), or None without --agent."""
    if name is None:
        return None
    loader = getattr(runtime, "agents", None)
    if loader is None:
        raise UsageError("--agent needs the agent loader, which this installation lacks")
    return loader.load(name)


def cli_context(runtime: Runtime, profile: Any) -> ToolContext:
    """The ToolContext of a command typed at the terminal (as ``profile`` if given)."""
    return runtime.catalog.context(
        agent=getattr(profile, "name", None),
        channel="cli",
        interactive=sys.stdin.isatty(),
        config=runtime.config,
        runtime=runtime,
        extra_read_roots=tuple(getattr(profile, "readable_roots", ()) or ()),
    )


@click.group()
def tool() -> None:
    """List tools and run one through the sandbox and audit."""


@tool.command("list")
@AGENT_OPTION
@json_option
@pass_state
def list_tools(state: CliState, agent_name: str | None, as_json: bool) -> None:
    """List tools: name, groups, plugin and whether each is available (and why not)."""
    runtime = state.runtime()
    catalog = runtime.catalog
    profile = _profile(runtime, agent_name)
    ctx = cli_context(runtime, profile)
    if profile is None:
        entries, unknown = catalog.entries(), []
    else:
        selection = catalog.select(profile.wanted_tools(), ctx)
        wanted = set(selection.names) | set(selection.unavailable)
        entries = [e for e in catalog.entries() if e.name in wanted]
        unknown = selection.unknown
    rows = []
    for entry in entries:
        ok, reason = entry.availability(ctx)
        rows.append(
            {
                "name": entry.name,
                "groups": sorted(entry.groups),
                "plugin": entry.plugin,
                "available": ok,
                "reason": reason or None,
                "description": entry.description,
            }
        )
    if as_json:
        echo_json({"tools": rows, "unknown": unknown})
        return
    click.echo(
        table(
            [
                [
                    row["name"],
                    ",".join(row["groups"]) or "-",
                    row["plugin"],
                    "yes" if row["available"] else f"no: {row['reason']}",
                ]
                for row in rows
            ],
            ["name", "groups", "plugin", "available"],
        )
    )
    for name in unknown:
        click.echo(
            f"warning: agent {agent_name} lists {name!r}, which no plugin provides", err=True
        )


def parse_input(text: str) -> dict[str, Any]:
    """The ``--input`` JSON object, or a UsageError saying what is wrong with it."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(f"--input is not valid JSON: {err}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--input must be a JSON object, not {type(value).__name__}")
    return value


@tool.command("run")
@click.argument("name")
@click.option("--input", "input_json", default="{}", metavar="JSON", help="The arguments.")
@AGENT_OPTION
@json_option
@pass_state
def run_tool(
    state: CliState, name: str, input_json: str, agent_name: str | None, as_json: bool
) -> None:
    """Run tool NAME with --input JSON through the sandbox, hooks and audit."""
    from oryxos.tools import ToolCall

    arguments = parse_input(input_json)
    runtime = state.runtime()
    catalog = runtime.catalog
    if name not in catalog:
        raise NotFoundError(f"unknown tool {name!r}; 'oryxos tool list' shows the tools")
    profile = _profile(runtime, agent_name)
    ctx = cli_context(runtime, profile)
    allowed = None
    if profile is not None:
        allowed = catalog.select(profile.wanted_tools(), ctx).names
        if name not in allowed:
            raise UsageError(f"agent {agent_name} has no tool {name!r} (its tools: "
                             f"{', '.join(allowed) or 'none'})")  # fmt: skip
    result = runtime.executor.run(ToolCall(name, arguments), ctx, allowed=allowed)
    if as_json:
        echo_json(result.as_dict())
    elif result.success:
        click.echo(result.content)
    else:
        click.echo(f"error: {result.error_message}", err=True)
    if not result.success:
        raise click.exceptions.Exit(EXIT_FAILURE)
