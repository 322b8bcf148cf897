"""``oryxos skill list|create|show|link|unlink|delete``: shared skills and their bindings.

Every command that changes a binding checks it again afterwards and reports the agent's
remaining faults, so a broken link is seen when it is made, not at the next chat.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from oryxos.commands import CliState, echo_json, json_option, pass_state, table
from oryxos.commands.profile import echo_faults, problem_dict, remove_tree
from oryxos.errors import ConflictError, FileProblemError, NotFoundError, OryxError

if TYPE_CHECKING:
    from oryxos.skills import SkillLibrary
    from oryxos.workspace import Workspace

SKILL_TEMPLATE = """\
---
name: {name}
description: {description}
---

# {name}

The steps the agent follows when this skill applies. Keep this file short: put long
reference material or scripts in other files of this folder and say here when to read or
run them.
"""


def _library(state: CliState) -> tuple[Workspace, SkillLibrary]:
    from oryxos.skills import SkillLibrary

    workspace = state.workspace.require()
    return workspace, SkillLibrary(workspace.skills_dir)


def _report_agent(workspace: Workspace, agent: str) -> None:
    """Warn about the agent's faulty bindings (including stale mentions in AGENT.md)."""
    from oryxos.agents import AgentLoader

    try:
        profile = AgentLoader(workspace, warn=False).load(agent)
    except FileProblemError as err:
        click.echo(f"warning: agent {agent}: AGENT.md is invalid: {err}", err=True)
        return
    echo_faults(profile.skills, agent=agent)


@click.group()
def skill() -> None:
    """Manage shared skills (.oryxos/skills/NAME/SKILL.md) and link them to agents."""


@skill.command("list")
@json_option
@pass_state
def list_skills(state: CliState, as_json: bool) -> None:
    """List the skills, the agents that link each, and faulty skills and bindings."""
    from oryxos.agents import AgentLoader
    from oryxos.skills import agents_linking

    workspace, library = _library(state)
    skills, problems = library.list()
    users = {s.name: agents_linking(workspace.agents_dir, library.path(s.name)) for s in skills}
    profiles, _ = AgentLoader(workspace, warn=False).list()
    faults = [(p.name, b) for p in profiles for b in p.skill_faults]
    if as_json:
        echo_json(
            {
                "skills": [{**s.as_dict(), "linked_by": users[s.name]} for s in skills],
                "problems": [problem_dict(p) for p in problems],
                "binding_faults": [{"agent": agent, **b.as_dict()} for agent, b in faults],
            }
        )
        return
    rows = [[s.name, ", ".join(users[s.name]) or "-", s.description] for s in skills]
    click.echo(table(rows, ["name", "linked by", "description"]))
    for problem in problems:
        click.echo(f"error: {problem}", err=True)
    for agent, binding in faults:
        echo_faults([binding], agent=agent)


@skill.command("create")
@click.argument("name")
@click.option("--description", default="", help="When the agent should use this skill.")
@pass_state
def create_skill(state: CliState, name: str, description: str) -> None:
    """Create skills/NAME/SKILL.md from a template."""
    import json

    _, library = _library(state)
    folder = library.path(name)
    if os.path.lexists(folder):
        raise ConflictError(f"skill {name!r} already exists at {folder}")
    text = description.strip() or "Say in one sentence when the agent should use this skill."
    folder.mkdir(parents=True)
    # JSON strings are valid YAML scalars: any description is quoted safely.
    body = SKILL_TEMPLATE.format(name=name, description=json.dumps(text, ensure_ascii=False))
    (folder / "SKILL.md").write_text(body, encoding="utf-8")
    library.load(name)  # the template must always be valid
    click.echo(f"created {folder / 'SKILL.md'}")
    click.echo(f"link it to an agent with: oryxos skill link {name} AGENT")


@skill.command("show")
@click.argument("name")
@json_option
@pass_state
def show_skill(state: CliState, name: str, as_json: bool) -> None:
    """Show a skill: description, SKILL.md path, its files and the agents that link it."""
    from oryxos.skills import agents_linking

    workspace, library = _library(state)
    found = library.load(name)
    users = agents_linking(workspace.agents_dir, library.path(name))
    files = sorted(
        os.path.relpath(os.path.join(root, f), found.directory)
        for root, _, names in os.walk(found.directory)
        for f in names
    )
    if as_json:
        echo_json({**found.as_dict(), "files": files, "linked_by": users})
        return
    click.echo(f"skill        {found.name}")
    click.echo(f"description  {found.description}")
    click.echo(f"file         {found.skill_file}")
    click.echo(f"files        {', '.join(files)}")
    click.echo(f"linked by    {', '.join(users) or '-'}")


@skill.command("link")
@click.argument("name")
@click.argument("agent")
@pass_state
def link_skill(state: CliState, name: str, agent: str) -> None:
    """Bind skill NAME to AGENT with a relative symlink in agents/AGENT/skills/."""
    from oryxos.agents import AgentLoader
    from oryxos.skills import inspect_link, relative_link_text

    workspace, library = _library(state)
    found = library.load(name)  # refuses a missing or invalid skill, naming the problem
    loader = AgentLoader(workspace)
    directory = loader.directory(agent)
    if not directory.is_dir():
        raise NotFoundError(f"no agent {agent!r} in {workspace.agents_dir}")
    link = directory / "skills" / name
    if link.parent.is_symlink() or (link.parent.exists() and not link.parent.is_dir()):
        raise ConflictError(f"{link.parent} must be a real folder (it is a symlink or a file)")
    if os.path.lexists(link):
        existing = inspect_link(link, workspace.skills_dir, workspace.path)
        if existing.ok and existing.skill and existing.skill.directory == found.directory:
            click.echo(f"agent {agent} already links skill {name}")
            return
        raise ConflictError(
            f"{link} already exists ({existing.state.value}: {existing.message or 'a link'}); "
            f"run 'oryxos skill unlink {name} {agent}' first"
        )
    link.parent.mkdir(exist_ok=True)
    os.symlink(relative_link_text(link, library.path(name)), link)
    check = inspect_link(link, workspace.skills_dir, workspace.path)
    if not check.ok:  # e.g. the workspace itself sits behind an odd link: never leave it
        os.unlink(link)
        raise OryxError(f"the new link {link} would be {check.state.value}: {check.message}")
    click.echo(f"linked {link} -> {os.readlink(link)}")
    _report_agent(workspace, agent)


@skill.command("unlink")
@click.argument("name")
@click.argument("agent")
@pass_state
def unlink_skill(state: CliState, name: str, agent: str) -> None:
    """Remove AGENT's link NAME (faulty links too). The skill itself stays."""
    from oryxos.agents import AgentLoader
    from oryxos.skills import check_name

    workspace, _ = _library(state)
    directory = AgentLoader(workspace).directory(agent)
    if not directory.is_dir():
        raise NotFoundError(f"no agent {agent!r} in {workspace.agents_dir}")
    link = directory / "skills" / check_name(name, "skill")
    if not os.path.lexists(link):
        raise NotFoundError(f"agent {agent} has no skill link {name!r} ({link})")
    if not os.path.islink(link):
        raise ConflictError(
            f"{link} is not a symlink (a copy or a leftover?); it is never deleted for you: "
            "move or remove it by hand"
        )
    os.unlink(link)
    click.echo(f"unlinked skill {name} from agent {agent}")
    _report_agent(workspace, agent)


@skill.command("delete")
@click.argument("name")
@click.option("--force", is_flag=True, help="Unlink it from every agent first.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_state
def delete_skill(state: CliState, name: str, force: bool, yes: bool) -> None:
    """Delete a shared skill; refused while an agent links it (unless --force)."""
    from oryxos.skills import agents_linking, link_paths

    workspace, library = _library(state)
    folder = library.path(name)
    if not os.path.lexists(folder):
        raise NotFoundError(f"no skill {name!r} in {workspace.skills_dir}")
    users = agents_linking(workspace.agents_dir, folder)
    if users and not force:
        raise ConflictError(
            f"skill {name!r} is linked by agents: {', '.join(users)}; unlink it first "
            f"('oryxos skill unlink {name} AGENT') or use --force"
        )
    if not yes:
        extra = f" and unlink it from {', '.join(users)}" if users else ""
        click.confirm(f"Delete skill {name} ({folder}){extra}?", abort=True)
    for link in link_paths(workspace.agents_dir, folder):
        os.unlink(link)
        click.echo(f"unlinked {link}")
    remove_tree(folder)
    click.echo(f"deleted skill {name}")
    for agent in users:
        _report_agent(workspace, agent)
