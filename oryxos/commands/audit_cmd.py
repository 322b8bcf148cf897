"""``oryxos audit tools|llm|export|prune``: read, export and expire the audit rows.

The same filters as the REST API's ``/audit/*`` listings (``oryxos.storage.AuditQuery``), so
that reading the audit needs neither the API nor a database client. ``export`` writes every
matching row (JSON lines or CSV, with the standard library's ``csv``) for archives and
analysis; ``prune`` deletes rows older than a cut-off (a retention policy), through the storage
plugin's ``AuditStore.prune``, and logs that it did.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.storage import AuditQuery, LlmCallRecord, Page, ToolInvocationRecord

log = logging.getLogger("oryxos.audit")

_RELATIVE = re.compile(r"^(\d+)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
WHEN_HELP = "ISO 8601 date or time (UTC unless it names a zone), or an age such as 30m, 2h, 7d."


class When(click.ParamType):
    """A point in time: ISO 8601 (naive means UTC) or an age like ``2h`` before now."""

    name = "WHEN"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        relative = _RELATIVE.match(text)
        if relative:
            amount, unit = int(relative.group(1)), relative.group(2)
            return datetime.now(UTC) - timedelta(**{_UNITS[unit]: amount})
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            self.fail(
                f"{text!r} is not a time: expected ISO 8601 (2026-11-30, 2026-11-30T09:00, "
                "2026-11-30T09:00+08:00) or an age (30m, 2h, 7d)",
                param,
                ctx,
            )
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _filters(fn: Any) -> Any:
    """The row filters, ``--limit`` and ``--json`` of a listing."""
    options = [
        _row_filters,
        click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000)),
        json_option,
        pass_state,
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _row_filters(fn: Any) -> Any:
    """Which rows: session, agent, outcome, time range (AuditQuery's fields)."""
    options = [
        click.option("--session", "session_id", metavar="ID", help="Only this session."),
        click.option("--agent", metavar="NAME", help="Only this agent."),
        click.option(
            "--ok/--failed",
            "success",
            default=None,
            help="Only successful ones, or only failed ones (refused, errors).",
        ),
        click.option("--since", type=When(), help=f"From this time on. {WHEN_HELP}"),
        click.option("--until", type=When(), help="Before this time (same forms as --since)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _cut(text: str | None, width: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


#: Columns every listing starts with.
COMMON = ["time (UTC)", "agent", "session"]


def _common(record: ToolInvocationRecord | LlmCallRecord) -> list[str]:
    return [_when(record.created_at), record.agent or "-", record.session_id or "-"]


def _outcome(success: bool) -> str:
    return "ok" if success else "FAILED"


def _show(
    page: Page[Any],
    as_json: bool,
    key: str,
    what: str,
    headers: list[str],
    row: Callable[[Any], list[str]],
) -> None:
    """Print one page as JSON (``{key: [...], "total": n}``) or as a table of ``row(record)``."""
    if as_json:
        echo_json({key: [r.as_dict() for r in page.items], "total": page.total})
        return
    if not page.items:
        click.echo(f"no {what} match")
        return
    click.echo(table([_common(r) + row(r) for r in page.items], COMMON + headers))
    if page.total > len(page.items):
        click.echo(f"({len(page.items)} of {page.total}, newest first; use --limit or filters)")


@click.group()
def audit() -> None:
    """Read the audit records: every tool call and model call, refused and failed ones too."""


@audit.command("tools")
@click.option("--tool", "tool_name", metavar="NAME", help="Only this tool.")
@_filters
def audit_tools(state: CliState, as_json: bool, success: bool | None, **filters: Any) -> None:
    """Tool calls (table tool_invocations), newest first; input is shown redacted."""
    page = state.runtime().storage.audit.tool_invocations(AuditQuery(success=success, **filters))

    def row(r: ToolInvocationRecord) -> list[str]:
        shown = _cut(r.error_message) if not r.success else _cut(_arguments(r.input))
        return [r.tool_name, _outcome(r.success), str(r.duration_ms), shown]

    headers = ["tool", "result", "ms", "input / error"]
    _show(page, as_json, "tool_invocations", "tool calls", headers, row)


@audit.command("llm")
@click.option("--provider", metavar="NAME", help="Only this provider (a key of providers:).")
@_filters
def audit_llm(state: CliState, as_json: bool, success: bool | None, **filters: Any) -> None:
    """Model calls (table llm_calls), one row per attempt, newest first."""
    page = state.runtime().storage.audit.llm_calls(AuditQuery(success=success, **filters))

    def row(r: LlmCallRecord) -> list[str]:
        return [
            r.provider,
            r.model,
            str(r.attempt),
            _outcome(r.success),
            str(r.total_tokens),
            str(r.duration_ms),
            _cut(r.error_message, 50),
        ]

    headers = ["provider", "model", "try", "result", "tokens", "ms", "error"]
    _show(page, as_json, "llm_calls", "model calls", headers, row)


def _arguments(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str) if value else ""


# Export -------------------------------------------------------------------------------------

#: Rows fetched per query while exporting.
EXPORT_PAGE = 500
TABLES = {
    "tools": ("tool_invocations", ToolInvocationRecord, "tool calls"),
    "llm": ("llm_calls", LlmCallRecord, "model calls"),
}


@audit.command("export")
@click.argument("what", type=click.Choice(sorted(TABLES)))
@click.option("--tool", "tool_name", metavar="NAME", help="Only this tool (tools).")
@click.option("--provider", metavar="NAME", help="Only this provider (llm).")
@_row_filters
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="JSON lines (one object per row, as --json shows them) or CSV (nested values as JSON).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, writable=True), help="File (default: stdout)."
)
@pass_state
def audit_export(
    state: CliState, what: str, fmt: str, output: str | None, success: bool | None, **filters: Any
) -> None:
    """Every matching row of WHAT (tools or llm), newest first, for archives and analysis.

    Rows written while the export runs are left out (the export ends at its start time), so a
    busy server does not make it repeat or skip rows.
    """
    key, record_type, label = TABLES[what]
    audit_store = state.runtime().storage.audit
    fetch = getattr(audit_store, key)
    now = datetime.now(UTC)
    until = filters.pop("until")
    query = AuditQuery(success=success, until=min(until, now) if until else now, **filters)
    rows = _all_rows(fetch, query)
    out = open(output, "w", encoding="utf-8", newline="") if output else sys.stdout  # noqa: SIM115
    try:
        count = _write(rows, record_type, fmt, out)
    finally:
        if output:
            out.close()
    if output:
        click.echo(f"exported {count} {label} to {output}", err=True)


def _all_rows(fetch: Callable[[AuditQuery], Page[Any]], query: AuditQuery) -> Iterator[Any]:
    offset = 0
    while True:
        page = fetch(dataclasses.replace(query, limit=EXPORT_PAGE, offset=offset))
        yield from page.items
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return


def _write(rows: Iterator[Any], record_type: type, fmt: str, out: TextIO) -> int:
    count = 0
    if fmt == "jsonl":
        for record in rows:
            out.write(json.dumps(record.as_dict(), ensure_ascii=False, default=str) + "\n")
            count += 1
        return count
    columns = [f.name for f in dataclasses.fields(record_type)]
    writer = csv.writer(out)
    writer.writerow(columns)
    for record in rows:
        data = record.as_dict()
        writer.writerow([_cell(data.get(column)) for column in columns])
        count += 1
    return count


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


# Retention ----------------------------------------------------------------------------------


@audit.command("prune")
@click.option(
    "--before",
    type=When(),
    required=True,
    help=f"Delete the rows created before this time. {WHEN_HELP}",
)
@click.option("--yes", is_flag=True, help="Delete. Without it, only count what would go.")
@json_option
@pass_state
def audit_prune(state: CliState, before: datetime, yes: bool, as_json: bool) -> None:
    """Delete audit rows (tool calls and model calls) older than --before: a retention policy.

    Export first if they must be archived (``oryxos audit export``). Without --yes nothing is
    deleted: the command says how many rows would go. The deletion is logged (WARNING,
    ``oryxos.audit``) with its cut-off and counts.
    """
    if before > datetime.now(UTC):
        raise click.BadParameter(f"{_when(before)} UTC is in the future", param_hint="'--before'")
    audit_store = state.runtime().storage.audit
    prune = getattr(audit_store, "prune", None)
    if prune is None:
        raise click.ClickException(
            f"the storage plugin's audit store ({type(audit_store).__name__}) cannot prune"
        )
    query = AuditQuery(until=before, limit=1)
    counts = {
        "tool_invocations": audit_store.tool_invocations(query).total,
        "llm_calls": audit_store.llm_calls(query).total,
    }
    if yes:
        counts = prune(before)
        log.warning(
            "audit pruned: %d tool call(s) and %d model call(s) created before %s UTC deleted",
            counts["tool_invocations"],
            counts["llm_calls"],
            _when(before),
            extra={"console": False},  # the log file keeps the trace; the command says it below
        )
    if as_json:
        echo_json({"before": before.isoformat(), "deleted": yes, **counts})
        return
    what = f"{counts['tool_invocations']} tool call(s) and {counts['llm_calls']} model call(s)"
    if yes:
        click.echo(f"deleted {what} created before {_when(before)} UTC")
    else:
        click.echo(
            f"would delete {what} created before {_when(before)} UTC; "
            "run again with --yes to delete them"
        )
