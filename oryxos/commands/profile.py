"""``oryxos profile list|create|show|delete``: the agents of the workspace (``agents/<name>/``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.errors import ConflictError, FileProblemError, OryxError, Problem

if TYPE_CHECKING:
    from oryxos.agents import AgentLoader, Profile
    from oryxos.skills import SkillBinding
    from oryxos.workspace import Workspace

DEFAULT_TOOLS = ["read_file", "list_dir", "save_memory", "recall_memory", "current_time"]
BODY_TEMPLATE = """\
You are {title}. Describe here, in plain words, what this agent is for, what it must do
and what it must never do. This text is the agent's instructions (its system prompt).

Bind shared skills with 'oryxos skill link SKILL {name}'.
"""


def problem_dict(problem: Problem) -> dict[str, Any]:
    return {
        "file": problem.file,
        "key": problem.key,
        "line": problem.line,
        "message": problem.message,
        "text": str(problem),
    }


def loader_for(state: CliState) -> AgentLoader:
    from oryxos.agents import AgentLoader

    return AgentLoader(state.workspace.require(), warn=False)  # commands print faults


def echo_faults(bindings: list[SkillBinding], *, agent: str) -> None:
    """One warning line per faulty binding (on stderr)."""
    for binding in bindings:
        if not binding.ok:
            click.echo(
                f"warning: agent {agent}: skill {binding.name} skipped "
                f"({binding.state.value}): {binding.message}",
                err=True,
            )


def agents_report(workspace: Workspace) -> dict[str, Any]:
    """Agents, skills and every fault, for ``oryxos status``."""
    from oryxos.agents import AgentLoader
    from oryxos.skills import SkillLibrary

    profiles, problems = AgentLoader(workspace, warn=False).list()
    skills, skill_problems = SkillLibrary(workspace.skills_dir).list()
    return {
        "agents": {
            "names": [p.name for p in profiles],
            "problems": [str(p) for p in problems],
            "skill_faults": [
                {"agent": p.name, **b.as_dict()} for p in profiles for b in p.skill_faults
            ],
        },
        "skills": {"names": [s.name for s in skills], "problems": [str(p) for p in skill_problems]},
    }


@click.group()
def profile() -> None:
    """Manage agents: each is a directory .oryxos/agents/NAME/ with an AGENT.md."""


@profile.command("list")
@json_option
@pass_state
def list_profiles(state: CliState, as_json: bool) -> None:
    """List the agents; a broken AGENT.md is reported and the others still listed."""
    profiles, problems = loader_for(state).list()
    if as_json:
        echo_json(
            {
                "agents": [
                    {
                        "name": p.name,
                        "description": p.description,
                        "provider": p.provider.name,
                        "model": p.provider.model,
                        "tools": p.wanted_tools(),
                        "skills": [b.name for b in p.bound_skills],
                        "skill_faults": [b.as_dict() for b in p.skill_faults],
                        "directory": str(p.directory),
                    }
                    for p in profiles
                ],
                "problems": [problem_dict(p) for p in problems],
            }
        )
        return
    rows = [
        [
            p.name,
            p.provider.name or "(default)",
            str(len(p.wanted_tools())),
            _skills_cell(p),
            p.description,
        ]
        for p in profiles
    ]
    click.echo(table(rows, ["name", "provider", "tools", "skills", "description"]))
    for p in profiles:
        echo_faults(p.skill_faults, agent=p.name)
    for problem in problems:
        click.echo(f"error: {problem}", err=True)


def _skills_cell(p: Profile) -> str:
    ok, bad = len(p.bound_skills), len(p.skill_faults)
    return f"{ok}" + (f" ({bad} faulty)" if bad else "")


@profile.command("create")
@click.argument("name")
@click.option("--provider", help="A provider name from config.yaml (default: default_provider).")
@click.option("--model", help="Override the provider's model.")
@click.option("--description", default="", help="One line saying what the agent does.")
@pass_state
def create_profile(
    state: CliState, name: str, provider: str | None, model: str | None, description: str
) -> None:
    """Create agents/NAME/AGENT.md from a template (and an empty skills/ folder)."""
    import yaml

    from oryxos.agents import derive_profile

    loader = loader_for(state)
    directory = loader.directory(name)
    if directory.exists() or directory.is_symlink():
        raise ConflictError(f"agent {name!r} already exists at {directory}")
    front: dict[str, Any] = {"name": name, "description": description or f"The {name} agent."}
    front["identity"] = {"agent_name": name}
    chosen = {k: v for k, v in (("name", provider), ("model", model)) if v}
    if chosen:
        front["provider"] = chosen
    front["tools"] = list(DEFAULT_TOOLS)
    front["settings"] = {"max_iterations": 10, "max_history_turns": 20}
    header = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
    text = f"---\n{header}---\n\n{BODY_TEMPLATE.format(title=name, name=name)}"
    (directory / "skills").mkdir(parents=True)
    (directory / "AGENT.md").write_text(text, encoding="utf-8")
    try:
        derive_profile(directory, skills_dir=loader.workspace.skills_dir)
    except FileProblemError:
        shutil.rmtree(directory)
        raise
    click.echo(f"created {directory / 'AGENT.md'}")
    _warn_unknown_provider(state, provider)


def _warn_unknown_provider(state: CliState, provider: str | None) -> None:
    if not provider:
        return
    try:
        providers = state.runtime().config.providers
    except OryxError:
        return  # 'oryxos status' reports a broken config
    if provider not in providers:
        click.echo(
            f"warning: provider {provider!r} is not under 'providers:' in config.yaml yet",
            err=True,
        )


@profile.command("show")
@click.argument("name")
@json_option
@pass_state
def show_profile(state: CliState, name: str, as_json: bool) -> None:
    """Show an agent as the runtime sees it: settings, skills with their state, tools."""
    loader = loader_for(state)
    p = loader.load(name)
    tools = _resolve_tools(state, p)
    provider = _provider_info(state, p)
    bootstrap = {item: (loader.workspace.path / item).is_file() for item in p.bootstrap}
    if as_json:
        data = p.as_dict()
        data["instructions"] = p.instructions
        data["provider"].update(provider)
        data["bootstrap_found"] = bootstrap
        data["resolved_tools"] = tools
        echo_json(data)
        return
    click.echo(f"agent        {p.name}  ({p.file})")
    if p.description:
        click.echo(f"description  {p.description}")
    if p.identity.agent_name or p.identity.prompt:
        who = p.identity.agent_name or "-"
        click.echo(f"identity     {who}" + (f": {p.identity.prompt}" if p.identity.prompt else ""))
    click.echo(f"provider     {_provider_line(p, provider)}")
    click.echo(
        f"settings     max_iterations {p.settings.max_iterations}, "
        f"max_history_turns {p.settings.max_history_turns}"
    )
    if p.channels:
        click.echo(f"channels     {', '.join(c.name for c in p.channels)}")
    found = [item if ok else f"{item} (missing)" for item, ok in bootstrap.items()]
    click.echo(f"bootstrap    {', '.join(found) or '-'}")
    click.echo(f"instructions {len(p.instructions)} characters")
    click.echo("skills" + ("       none bound" if not p.skills else ""))
    for b in p.skills:
        detail = f"{b.skill.description} ({b.skill.skill_file})" if b.skill else b.message
        click.echo(f"  {b.state.value:<15} {b.name}: {detail}")
    click.echo("tools" + ("        none" if not p.wanted_tools() else ""))
    if "error" in tools:
        click.echo(f"  cannot resolve: {tools['error']}")
    for tool_name in tools.get("available", []):
        click.echo(f"  available       {tool_name}")
    for tool_name, reason in tools.get("unavailable", {}).items():
        click.echo(f"  unavailable     {tool_name}: {reason}")
    for tool_name in tools.get("unknown", []):
        click.echo(f"  unknown         {tool_name}: no plugin registers it")


def _resolve_tools(state: CliState, p: Profile) -> dict[str, Any]:
    """What the catalog gives this agent in a non-interactive context."""
    try:
        runtime = state.runtime()
        ctx = runtime.catalog.context(agent=p.name, config=runtime.config, runtime=runtime)
        selection = runtime.catalog.select(p.wanted_tools(), ctx)
    except OryxError as err:
        return {"error": str(err)}
    return {
        "available": selection.names,
        "unavailable": dict(selection.unavailable),
        "unknown": list(selection.unknown),
    }


def _provider_info(state: CliState, p: Profile) -> dict[str, Any]:
    try:
        config = state.runtime().config
    except OryxError as err:
        return {"resolved": None, "configured": False, "config_error": str(err)}
    resolved = p.provider.name or config.default_provider
    return {"resolved": resolved, "configured": bool(resolved and resolved in config.providers)}


def _provider_line(p: Profile, info: dict[str, Any]) -> str:
    name = info.get("resolved") or "(none: set provider.name or default_provider)"
    parts = [name if info.get("configured") else f"{name} (not in config.yaml providers)"]
    if p.provider.model:
        parts.append(f"model {p.provider.model}")
    if p.provider.temperature is not None:
        parts.append(f"temperature {p.provider.temperature}")
    key = p.provider.api_key
    if key is not None:  # the variable's name and whether it is set: never the value
        parts.append(f"key {key.describe()} {'set' if key.is_set() else 'NOT SET'}")
    return ", ".join(parts)


@profile.command("delete")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def delete_profile(state: CliState, name: str, yes: bool) -> None:
    """Delete an agent's directory (its skill links go; the shared skills stay)."""
    from oryxos.errors import NotFoundError

    loader = loader_for(state)
    directory = loader.directory(name)
    if not directory.is_dir():
        raise NotFoundError(f"no agent {name!r} in {loader.workspace.agents_dir}")
    if not yes:
        click.confirm(f"Delete agent {name} and everything in {directory}?", abort=True)
    remove_tree(directory)
    click.echo(f"deleted agent {name}")


def remove_tree(path: Path) -> None:
    """Delete a folder; a symlink is removed itself, never what it points to."""
    if os.path.islink(path):
        os.unlink(path)
    else:
        shutil.rmtree(path)  # links inside are unlinked, not followed
