"""``oryxos status``: is this workspace usable, and what does it hold?"""

from __future__ import annotations

import os
from typing import Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state
from oryxos.errors import EXIT_USAGE, ConfigError, OryxError


def collect_status(state: CliState) -> tuple[dict[str, Any], int]:
    """The status report and the exit code it implies (2 when the config is invalid)."""
    workspace = state.workspace.require()
    report: dict[str, Any] = {"workspace": str(workspace.path)}
    report["plugins"] = {
        "loaded": [info.name for info in state.pm.plugin_infos()],
        "disabled": state.pm.report.disabled,
        "broken": [str(b) for b in state.pm.report.broken],
    }
    from oryxos.commands.profile import agents_report

    report.update(agents_report(workspace))  # agents and skills need no valid config
    try:
        runtime = state.runtime()
    except ConfigError as err:
        report["config"] = {"valid": False, "file": str(workspace.config_file), "error": str(err)}
        return report, EXIT_USAGE
    config = runtime.config
    report["config"] = {"valid": True, "file": str(workspace.config_file)}
    report["providers"] = [
        {
            "name": name,
            "model": provider.model,
            "api_base": provider.api_base,
            "key": provider.api_key.describe() if provider.api_key else None,
            "key_set": provider.api_key.is_set(os.environ) if provider.api_key else None,
        }
        for name, provider in sorted(config.providers.items())
    ]
    report["storage"] = {"backend": config.storage.backend, "url": config.storage.url}
    try:
        storage = runtime.storage
        report["storage"]["schema_version"] = storage.schema_version()
        report["storage"]["rows"] = storage.counts()
    except OryxError as err:
        report["storage"]["error"] = str(err)
    from oryxos.status import collect_sections

    report["sections"] = [section.as_dict() for section in collect_sections(runtime)]
    return report, 0


def _print(report: dict[str, Any]) -> None:
    click.echo(f"workspace  {report['workspace']}")
    config = report["config"]
    if config["valid"]:
        click.echo(f"config     {config['file']}: valid")
    else:
        click.echo(f"config     INVALID\n{config['error']}")
    plugins = report["plugins"]
    click.echo(f"plugins    {len(plugins['loaded'])} loaded: {', '.join(plugins['loaded'])}")
    if plugins["disabled"]:
        click.echo(f"           disabled: {', '.join(plugins['disabled'])}")
    for broken in plugins["broken"]:
        click.echo(f"           {broken}")
    _print_agents(report)
    if "providers" in report:
        if not report["providers"]:
            click.echo("providers  none configured (add one under 'providers:' in config.yaml)")
        for p in report["providers"]:
            key = (
                "no key"
                if p["key"] is None
                else (f"key {p['key']} {'set' if p['key_set'] else 'NOT SET'}")
            )
            base = f" at {p['api_base']}" if p["api_base"] else ""
            click.echo(f"provider   {p['name']}: {p['model']}{base}, {key}")
    if "storage" in report:
        storage = report["storage"]
        click.echo(f"storage    {storage['backend']} {storage['url']}")
        if "error" in storage:
            click.echo(f"           error: {storage['error']}")
        if "rows" in storage:
            rows = ", ".join(f"{table} {count}" for table, count in storage["rows"].items())
            click.echo(f"           schema v{storage['schema_version']}; rows: {rows}")
    for section in report.get("sections", []):
        click.echo(f"{section['name']:<10} {section['summary']}")
        for item in section["items"]:
            click.echo(f"           {_item_line(item)}")


def _item_line(item: dict[str, Any]) -> str:
    """``name: state, key value, ...`` for one row of a plugin's status section."""
    rest = {k: v for k, v in item.items() if k not in ("name", "state") and v not in (None, "")}
    parts = [str(item.get("state", ""))] + [f"{k} {v}" for k, v in rest.items() if k != "error"]
    line = f"{item.get('name', '?')}: " + ", ".join(p for p in parts if p)
    return line + (f" — {rest['error']}" if "error" in rest else "")


def _print_agents(report: dict[str, Any]) -> None:
    agents, skills = report["agents"], report["skills"]
    click.echo(f"agents     {len(agents['names'])}: {', '.join(agents['names']) or '-'}")
    for problem in agents["problems"]:
        click.echo(f"           error: {problem}")
    for fault in agents["skill_faults"]:
        click.echo(
            f"           {fault['agent']}: skill {fault['name']} {fault['state']}: "
            f"{fault['message']}"
        )
    click.echo(f"skills     {len(skills['names'])}: {', '.join(skills['names']) or '-'}")
    for problem in skills["problems"]:
        click.echo(f"           error: {problem}")


@click.command()
@json_option
@pass_state
def status(state: CliState, as_json: bool) -> None:
    """Show the workspace, config validity, plugins, providers, storage, and what plugins
    report (MCP servers, ...)."""
    report, code = collect_status(state)
    if as_json:
        echo_json(report)
    else:
        _print(report)
    if code:
        raise click.exceptions.Exit(code)
