"""``oryxos audit tools|llm``: the audit rows (tool calls, model calls), newest first.

The same filters as the REST API's ``/audit/*`` listings (``oryxos.storage.AuditQuery``), so
that reading the audit needs neither the API nor a database client.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.storage import AuditQuery, LlmCallRecord, Page, ToolInvocationRecord

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
        click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000)),
        json_option,
        pass_state,
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
