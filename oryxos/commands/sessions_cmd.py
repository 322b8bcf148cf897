"""``oryxos session list|show|archive``: stored conversations and their histories."""

from __future__ import annotations

import json
from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.storage import SESSION_STATUSES, SessionRecord


def _summary(record: SessionRecord) -> dict[str, Any]:
    out = record.as_dict()
    out.pop("messages")
    out["message_count"] = len(record.messages)
    return out


@click.group()
def session() -> None:
    """Conversations with agents, stored in the database."""


@session.command("list")
@click.option("--profile", "-p", "profile", metavar="NAME", help="Only this agent's sessions.")
@click.option("--status", type=click.Choice(SESSION_STATUSES), help="Only active or archived.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 1000))
@json_option
@pass_state
def list_sessions(
    state: CliState, profile: str | None, status: str | None, limit: int, as_json: bool
) -> None:
    """List sessions, most recently active first."""
    page = state.runtime().sessions.store.list(profile_name=profile, status=status, limit=limit)
    if as_json:
        echo_json({"sessions": [_summary(r) for r in page.items], "total": page.total})
        return
    if not page.items:
        click.echo("no sessions")
        return
    rows = [
        [
            r.session_id,
            r.profile_name,
            r.channel,
            r.status,
            str(len(r.messages)),
            r.last_active_at.strftime("%Y-%m-%d %H:%M:%S"),
        ]
        for r in page.items
    ]
    click.echo(table(rows, ["id", "agent", "channel", "status", "messages", "last active (UTC)"]))
    if page.total > len(page.items):
        click.echo(f"({len(page.items)} of {page.total}; use --limit)")


def format_message(message: dict[str, Any]) -> str:
    """One history message as a readable line or two."""
    role = message.get("role", "?")
    content = message.get("content") or ""
    if role == "tool":
        return f"  [tool result {message.get('tool_call_id', '')}] {content}"
    lines = [f"{role}: {content}"] if content or role != "assistant" else []
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        lines.append(f"  [tool call] {function.get('name')}({function.get('arguments', '')})")
    return "\n".join(lines)


@session.command("show")
@click.argument("session_id")
@json_option
@pass_state
def show_session(state: CliState, session_id: str, as_json: bool) -> None:
    """Show a session and its whole history."""
    record = state.runtime().sessions.get(session_id)
    if as_json:
        echo_json(record.as_dict())
        return
    click.echo(
        f"session {record.session_id}  agent {record.profile_name}  channel {record.channel}  "
        f"user {record.user_id}  {record.status}\n"
        f"created {record.created_at:%Y-%m-%d %H:%M:%S}  "
        f"last active {record.last_active_at:%Y-%m-%d %H:%M:%S} UTC  "
        f"{len(record.messages)} messages\n"
    )
    for message in record.messages:
        text = format_message(message)
        if text:
            click.echo(text)


@session.command("archive")
@click.argument("session_id")
@pass_state
def archive_session(state: CliState, session_id: str) -> None:
    """Archive a session (kept for audit; chat starts a new one)."""
    sessions = state.runtime().sessions
    sessions.get(session_id)  # NotFoundError with a hint if there is none
    sessions.archive(session_id)
    click.echo(f"archived {json.dumps(session_id)}")
