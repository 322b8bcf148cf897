"""``oryxos notify list|add|update|remove|test``: manage notify channels from the shell.

Everything goes through ``runtime.notify`` (the same registry as the REST API and the tool).
Secrets are never printed: a channel shows ``${VAR}`` for a secret read from the environment,
``stored`` for one kept in the database, or nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.errors import EXIT_FAILURE, UsageError


def _secret_option(secret_env: str | None, secret_stdin: bool) -> str | None:
    from oryxos.notify import secret_from_env

    if secret_env and secret_stdin:
        raise UsageError("give either --secret-env or --secret-stdin, not both")
    if secret_env:
        secret = secret_from_env(secret_env)
        if secret_env not in os.environ:
            click.echo(
                f"warning: {secret_env} is not set in this environment; deliveries fail "
                "until it is set where OryxOS runs",
                err=True,
            )
        return secret
    if secret_stdin:
        value = sys.stdin.readline().strip()
        if not value:
            raise UsageError("--secret-stdin: no secret on standard input")
        return value
    return None


def _row(item: dict[str, Any]) -> list[str]:
    return [
        item["name"],
        item["type"],
        item["url"],
        item["secret"] or "-",
        item["description"] or "",
    ]


@click.group(name="notify")
def notify() -> None:
    """Notify channels: named Feishu/Lark, WeCom, DingTalk or webhook targets.

    Agents send to a channel by name with the notify tool; the name is looked up on every
    message, so adding or repointing a channel needs no agent change.
    """


@notify.command(name="list")
@json_option
@pass_state
def list_channels(state: CliState, as_json: bool) -> None:
    """List the registered channels (secrets are never shown)."""
    service = state.runtime().notify
    items = [service.describe(record) for record in service.list()]
    if as_json:
        echo_json(items)
        return
    if not items:
        types = ", ".join(service.types()) or "none"
        click.echo(f"no notify channels; add one with 'oryxos notify add' (types: {types})")
        return
    click.echo(table([_row(i) for i in items], ["name", "type", "url", "secret", "description"]))


@notify.command(name="add")
@click.argument("name")
@click.option("--type", "type_", required=True, metavar="TYPE", help="feishu, wecom, dingtalk, …")
@click.option("--url", required=True, help="The webhook URL the vendor gave you.")
@click.option("--secret-env", metavar="VAR", help="Sign with the secret in this env variable.")
@click.option("--secret-stdin", is_flag=True, help="Read a secret to store from stdin.")
@click.option("--description", "-d", help="What the channel is for.")
@pass_state
def add(
    state: CliState,
    name: str,
    type_: str,
    url: str,
    secret_env: str | None,
    secret_stdin: bool,
    description: str | None,
) -> None:
    """Register the channel NAME."""
    secret = _secret_option(secret_env, secret_stdin)
    record = state.runtime().notify.add(name, type_, url, secret=secret, description=description)
    click.echo(f"added notify channel {record.name} ({record.type})")


@notify.command(name="update")
@click.argument("name")
@click.option("--type", "type_", metavar="TYPE", help="A new channel type.")
@click.option("--url", help="A new webhook URL.")
@click.option("--secret-env", metavar="VAR", help="Sign with the secret in this env variable.")
@click.option("--secret-stdin", is_flag=True, help="Read a secret to store from stdin.")
@click.option("--no-secret", is_flag=True, help="Remove the channel's secret.")
@click.option("--description", "-d", help="A new description ('' removes it).")
@pass_state
def update(
    state: CliState,
    name: str,
    type_: str | None,
    url: str | None,
    secret_env: str | None,
    secret_stdin: bool,
    no_secret: bool,
    description: str | None,
) -> None:
    """Change the channel NAME (only the options given)."""
    from oryxos.notify import UNSET

    changes: dict[str, Any] = {"type": type_, "url": url}
    if no_secret and (secret_env or secret_stdin):
        raise UsageError("--no-secret cannot be combined with --secret-env or --secret-stdin")
    if no_secret:
        changes["secret"] = None
    elif secret_env or secret_stdin:
        changes["secret"] = _secret_option(secret_env, secret_stdin)
    changes["description"] = UNSET if description is None else description
    record = state.runtime().notify.update(name, **changes)
    click.echo(f"updated notify channel {record.name} ({record.type})")


@notify.command(name="remove")
@click.argument("name")
@pass_state
def remove(state: CliState, name: str) -> None:
    """Delete the channel NAME."""
    state.runtime().notify.remove(name)
    click.echo(f"removed notify channel {name}")


@notify.command(name="test")
@click.argument("name")
@click.option("--message", "-m", help="What to send (default: a short test message).")
@json_option
@pass_state
def test(state: CliState, name: str, message: str | None, as_json: bool) -> None:
    """Send a message to the channel NAME now and report what the vendor said."""
    from datetime import UTC, datetime

    if message is None:
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        message = f"OryxOS test message for notify channel {name} ({now})"
    delivery = state.runtime().notify.send(name, message)
    if as_json:
        echo_json(
            {
                "channel": name,
                "ok": delivery.ok,
                "detail": delivery.detail,
                "status_code": delivery.status_code,
                "attempts": delivery.attempts,
            }
        )
    elif delivery.ok:
        click.echo(f"delivered to {name}: {delivery.detail}")
    else:
        click.echo(f"error: delivery to {name} failed: {delivery.detail}", err=True)
    if not delivery.ok:
        click.get_current_context().exit(EXIT_FAILURE)
