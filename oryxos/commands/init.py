"""``oryxos init``: create the workspace of DESIGN.md in the current (or given) directory."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from oryxos.commands import CliState, pass_state
from oryxos.errors import OryxError, WorkspaceError

#: workspace-relative path → template file (under oryxos/templates/)
TEMPLATE_FILES = {
    "config.yaml": "config.yaml",
    "agents/default/AGENT.md": "agents/default/AGENT.md",
    "AGENTS.md": "AGENTS.md",
    "SOUL.md": "SOUL.md",
    "USER.md": "USER.md",
    "memory/MEMORY.md": "MEMORY.md",
    "mcp_servers.yaml": "mcp_servers.yaml.example",
}
DIRECTORIES = ("agents/default/skills", "skills", "memory", "logs")


def template_text(name: str) -> str:
    """The text of a file shipped in ``oryxos/templates``."""
    return resources.files("oryxos").joinpath("templates", name).read_text(encoding="utf-8")


def create_workspace(path: Path, *, force: bool = False) -> tuple[list[str], list[str]]:
    """Create the workspace files that are missing; return (created, kept) relative paths.

    Without ``force`` an existing workspace is an error; with it, only missing files are
    written — a file that exists is never overwritten.
    """
    if path.exists() and not force and any(path.iterdir()):
        raise WorkspaceError(
            f"a workspace already exists at {path}; use --force to add only the missing files "
            "(existing files are never overwritten)"
        )
    created, kept = [], []
    for directory in DIRECTORIES:
        target = path / directory
        if not target.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            created.append(directory + "/")
    for relative, template in TEMPLATE_FILES.items():
        target = path / relative
        if target.exists() or target.is_symlink():
            kept.append(relative)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "x", encoding="utf-8") as handle:  # "x": never clobber a racing write
            handle.write(template_text(template))
        created.append(relative)
    return created, kept


@click.command()
@click.option("--force", is_flag=True, help="Add missing files to an existing workspace.")
@pass_state
def init(state: CliState, force: bool) -> None:
    """Create a workspace (.oryxos/) with a default agent, config and database."""
    workspace = state.workspace
    created, kept = create_workspace(workspace.path, force=force)
    click.echo(f"workspace: {workspace.path}")
    for item in created:
        click.echo(f"  created  {item}")
    for item in kept:
        click.echo(f"  kept     {item} (exists)")
    try:
        storage = state.runtime().storage
        click.echo(f"  database {storage.url} (schema version {storage.schema_version()})")
    except OryxError as err:
        click.echo(f"  database not created: {err}", err=True)
    click.echo("next: set a provider in .oryxos/config.yaml, then 'oryxos status'")
