"""``oryxos provider list``: the providers of config.yaml, their models and whether keys are set.

Providers come from config (an explicit name → model map), so this is a kernel command; it
also says which plugin registered each one. Keys are never shown: only the variable name and
whether it is set.
"""

from __future__ import annotations

import os
from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table


def provider_rows(state: CliState) -> list[dict[str, Any]]:
    runtime = state.runtime()
    config = runtime.config
    registered = runtime.providers
    rows = []
    for name, provider in sorted(config.providers.items()):
        key = provider.api_key
        rows.append(
            {
                "name": name,
                "default": name == config.default_provider,
                "model": provider.model,
                "api_base": provider.api_base,
                "key": key.describe() if key else None,
                "key_set": key.is_set(os.environ) if key else None,
                "timeout": provider.timeout,
                "max_retries": provider.max_retries,
                "plugin": registered.owner(name) if name in registered else None,
            }
        )
    return rows


@click.group()
def provider() -> None:
    """LLM providers (the 'providers:' section of config.yaml)."""


@provider.command("list")
@json_option
@pass_state
def list_providers(state: CliState, as_json: bool) -> None:
    """List providers: name, model, base URL, key variable and whether it is set."""
    rows = provider_rows(state)
    if as_json:
        echo_json({"providers": rows})
        return
    if not rows:
        click.echo("no providers configured: add one under 'providers:' in config.yaml")
        return

    def key_text(row: dict[str, Any]) -> str:
        if row["key"] is None:
            return "-"
        return f"{row['key']} ({'set' if row['key_set'] else 'NOT SET'})"

    click.echo(
        table(
            [
                [
                    row["name"] + (" *" if row["default"] else ""),
                    row["model"],
                    row["api_base"] or "-",
                    key_text(row),
                    row["plugin"] or "NOT REGISTERED",
                ]
                for row in rows
            ],
            ["name", "model", "api base", "key", "plugin"],
        )
    )
