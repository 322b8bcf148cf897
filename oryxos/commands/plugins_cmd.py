"""``oryxos plugins``: every loaded plugin with its distribution, version and hooks."""

from __future__ import annotations

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table


@click.command()
@json_option
@pass_state
def plugins(state: CliState, as_json: bool) -> None:
    """List loaded plugins (and those that failed to load)."""
    infos = state.pm.plugin_infos()
    report = state.pm.report
    if as_json:
        echo_json(
            {
                "plugins": [info.as_dict() for info in infos],
                "broken": [
                    {"name": b.name, "distribution": b.distribution, "cause": b.cause}
                    for b in report.broken
                ],
                "disabled": report.disabled,
            }
        )
        return
    rows = [
        [i.name, i.distribution or "-", i.version or "-", ", ".join(i.hooks) or "-"] for i in infos
    ]
    click.echo(table(rows, ["name", "distribution", "version", "hooks"]))
    for name in report.disabled:
        click.echo(f"disabled: {name}")
    for broken in report.broken:
        click.echo(f"broken: {broken}", err=True)
