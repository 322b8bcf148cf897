"""``oryxos sandbox list|add|remove``: the runtime whitelist entries kept in the database.

Entries added here apply at once to every process using the workspace (the sandbox re-reads
them when the store's version changes), on top of the whitelists in config.yaml, which this
command shows but never edits.
"""

from __future__ import annotations

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.errors import NotFoundError, UsageError
from oryxos.storage import WHITELIST_KINDS

KIND = click.argument("kind", type=click.Choice(WHITELIST_KINDS, case_sensitive=False))


def validate_entry(kind: str, value: str) -> str:
    """The value to store, or a UsageError that says what a valid entry looks like."""
    from oryxos.sandbox import parse_host_pattern, shell_entry_problem

    value = value.strip()
    if not value or "\x00" in value:
        raise UsageError("a whitelist entry needs a non-empty value")
    if kind == "http":
        try:
            parse_host_pattern(value)
        except ValueError as err:
            raise UsageError(
                f"not a host or *.domain entry: {err} (e.g. api.example.com, *.feishu.cn)"
            ) from None
    elif kind == "shell":
        problem = shell_entry_problem(value)
        if problem:
            raise UsageError(problem)
    return value


@click.group()
def sandbox() -> None:
    """Show the sandbox whitelists; add or remove runtime entries."""


@sandbox.command("list")
@click.argument("kind", required=False, type=click.Choice(WHITELIST_KINDS, case_sensitive=False))
@json_option
@pass_state
def list_entries(state: CliState, kind: str | None, as_json: bool) -> None:
    """Every effective entry: from config.yaml, from the database, and the workspace."""
    runtime = state.runtime()
    checker = runtime.sandbox
    stored = {(e.kind, e.value): e for e in runtime.storage.whitelist.list()}
    rows = []
    if kind in (None, "file"):
        rows.append({"kind": "file", "value": str(runtime.workspace.project_dir),
                     "source": "workspace", "note": "always allowed"})  # fmt: skip
    for each in [kind] if kind else WHITELIST_KINDS:
        for value, source in checker.entries(each.lower()):
            entry = stored.get((each, value)) if source == "runtime" else None
            rows.append(
                {
                    "kind": each,
                    "value": value,
                    "source": source,
                    "note": entry.note if entry else None,
                }
            )
    if as_json:
        echo_json(rows)
        return
    click.echo(
        table(
            [[r["kind"], r["value"], r["source"], r["note"] or ""] for r in rows],
            ["kind", "value", "source", "note"],
        )
    )


@sandbox.command("add")
@KIND
@click.argument("value")
@click.option("--note", help="Why the entry exists.")
@pass_state
def add_entry(state: CliState, kind: str, value: str, note: str | None) -> None:
    """Allow VALUE (a path, a command or a host) at run time, without a restart."""
    kind = kind.lower()
    entry = state.runtime().storage.whitelist.add(kind, validate_entry(kind, value), note)
    click.echo(f"added {kind} entry {entry.value!r}")


@sandbox.command("remove")
@KIND
@click.argument("value")
@pass_state
def remove_entry(state: CliState, kind: str, value: str) -> None:
    """Remove a runtime entry (entries from config.yaml are edited in the file)."""
    kind = kind.lower()
    if not state.runtime().storage.whitelist.remove(kind, value.strip()):
        raise NotFoundError(
            f"the runtime {kind} whitelist has no {value!r} ('oryxos sandbox list' shows it)"
        )
    click.echo(f"removed {kind} entry {value.strip()!r}")
