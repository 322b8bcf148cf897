"""``oryxos memory show|search|clear``: look at and reset MEMORY.md from the command line."""

from __future__ import annotations

from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state
from oryxos.errors import OryxError


def _memory(state: CliState) -> Any:
    runtime = state.runtime()
    memory = runtime.memory
    if memory is None:
        raise OryxError(
            f"no memory back-end {runtime.config.memory.backend!r} is loaded "
            "(memory.backend in config.yaml; is the memory plugin disabled?)"
        )
    return memory


def _entry_dict(entry: Any) -> dict[str, Any]:
    data = {"saved_at": entry.saved_at, "text": entry.text}
    if entry.score:
        data["score"] = entry.score
    return data


@click.group()
def memory() -> None:
    """Show, search or clear long-term memory (MEMORY.md)."""


@memory.command()
@json_option
@pass_state
def show(state: CliState, as_json: bool) -> None:
    """Print every memory entry, oldest first."""
    mem = _memory(state)
    entries = mem.entries()
    if as_json:
        path = str(getattr(mem, "path", ""))
        echo_json({"path": path, "entries": [_entry_dict(e) for e in entries]})
        return
    if not entries:
        click.echo("Memory is empty.")
        return
    for entry in entries:
        click.echo(f"[{entry.saved_at}] {entry.text}")


@memory.command()
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 20), default=5, show_default=True)
@json_option
@pass_state
def search(state: CliState, query: str, limit: int, as_json: bool) -> None:
    """Entries matching QUERY's keywords, best first."""
    found = _memory(state).search(query, limit=limit)
    if as_json:
        echo_json({"query": query, "entries": [_entry_dict(e) for e in found]})
        return
    if not found:
        click.echo(f"No memory entry matches {query!r}.")
    for entry in found:
        click.echo(f"[{entry.saved_at}] {entry.text}")


@memory.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def clear(state: CliState, yes: bool) -> None:
    """Delete every entry (the old file is kept as MEMORY.md.bak-<time>)."""
    mem = _memory(state)
    if not hasattr(mem, "clear"):
        raise OryxError(f"the memory back-end {type(mem).__name__} cannot be cleared from here")
    count = len(mem.entries())
    if count == 0:
        click.echo("Memory is already empty.")
        return
    if not yes:
        click.confirm(f"Delete all {count} memory entries?", abort=True)
    backup = mem.clear()
    click.echo(f"Cleared {count} entries; the old file is kept at {backup}.")
