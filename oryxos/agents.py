"""Agents as directories: ``.oryxos/agents/<name>/AGENT.md`` → :class:`Profile`.

AGENT.md is YAML frontmatter (what the runtime needs to run the agent, validated by pydantic
with unknown keys refused) followed by a Markdown body (the agent's instructions). The agent's
``skills/`` folder holds relative symlinks to shared skills (see :mod:`oryxos.skills`).

Values in the frontmatter are taken literally — ``${...}`` is *not* expanded — except
``provider.api_key``, which must be an environment reference such as ``${DEEPSEEK_API_KEY}`` and
stays a :class:`~oryxos.secrets.SecretRef` until a provider call resolves it. The body is never
expanded either, so instructions can show ``${VAR}`` to the model.

Loading one agent reads only that agent's directory, the skill folders its links reach and the
names of the library's skill folders: never another agent's files, so one broken agent cannot
stop another from loading.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from oryxos.errors import FileProblemError, NotFoundError, Problem
from oryxos.secrets import SecretRef, attach_origins
from oryxos.skills import SkillBinding, check_name, inspect_bindings, split_frontmatter
from oryxos.workspace import Workspace

log = logging.getLogger("oryxos.agents")

AGENT_FILENAME = "AGENT.md"
DEFAULT_BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Identity(_Model):
    """Who the agent says it is."""

    agent_name: str | None = Field(default=None, description="the name the agent uses")
    prompt: str | None = Field(default=None, description="one or two lines of persona")


class ProviderChoice(_Model):
    """Which configured provider the agent uses, and per-agent overrides."""

    name: str | None = Field(default=None, description="a key of 'providers:' in config.yaml")
    model: str | None = Field(default=None, description="overrides the provider's model")
    temperature: float | None = Field(default=None, ge=0, le=2)
    fallback: str | None = Field(
        default=None, description="another key of 'providers:' to use when this one fails"
    )
    api_key: SecretRef | None = Field(
        default=None, description="an environment reference such as ${DEEPSEEK_API_KEY}"
    )

    @field_validator("api_key")
    @classmethod
    def _environment_only(cls, value: SecretRef | None) -> SecretRef | None:
        if value is not None and value.is_literal:
            raise ValueError(
                "must be an environment reference such as ${DEEPSEEK_API_KEY}; "
                "never write the key itself in AGENT.md"
            )
        return value


class ChannelChoice(_Model):
    """A channel the agent answers on (``cli``, ``rest``, an IM bot ...)."""

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


class Settings(_Model):
    max_iterations: int = Field(default=10, ge=1, le=200, description="tool rounds per turn")
    max_history_turns: int = Field(default=20, ge=1, le=1000, description="turns in the prompt")


class AgentFrontmatter(_Model):
    """The frontmatter of AGENT.md, exactly as a person writes it."""

    name: str = Field(description="must equal the agent's directory name")
    description: str = ""
    identity: Identity = Field(default_factory=Identity)
    provider: ProviderChoice = Field(default_factory=ProviderChoice)
    tools: list[str] = Field(default_factory=list, description="tool names and @groups")
    mcp_servers: list[str] = Field(default_factory=list)
    channels: list[ChannelChoice] = Field(default_factory=list)
    bootstrap: list[str] = Field(default_factory=lambda: list(DEFAULT_BOOTSTRAP))
    settings: Settings = Field(default_factory=Settings)

    @field_validator("name")
    @classmethod
    def _matches_directory(cls, value: str, info: ValidationInfo) -> str:
        expected = (info.context or {}).get("directory_name")
        if expected is not None and value != expected:
            raise ValueError(f"is {value!r} but the directory is named {expected!r}")
        return value

    @field_validator("channels", mode="before")
    @classmethod
    def _channel_names(cls, value: Any) -> Any:
        if isinstance(value, list):  # "- cli" is short for "- name: cli"
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("bootstrap")
    @classmethod
    def _inside_workspace(cls, value: list[str]) -> list[str]:
        for item in value:
            parts = Path(item).parts
            if not item or Path(item).is_absolute() or ".." in parts:
                raise ValueError(
                    f"{item!r} must be a file name relative to the workspace (.oryxos/)"
                )
        return value

    @field_validator("tools", "mcp_servers")
    @classmethod
    def _no_blanks(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("entries must not be empty")
        return value


@dataclass
class Profile:
    """An agent as the runtime uses it: AGENT.md's frontmatter, body, directory and skills."""

    name: str
    description: str
    identity: Identity
    provider: ProviderChoice
    tools: list[str]
    mcp_servers: list[str]
    channels: list[ChannelChoice]
    bootstrap: list[str]
    settings: Settings
    instructions: str
    directory: Path
    skills: list[SkillBinding] = field(default_factory=list)

    @property
    def file(self) -> Path:
        return self.directory / AGENT_FILENAME

    def wanted_tools(self) -> list[str]:
        """What to ask the tool catalog for: the tools list plus each MCP server's group."""
        return self.tools + ["@mcp:" + server for server in self.mcp_servers]

    @property
    def bound_skills(self) -> list[SkillBinding]:
        """The valid bindings, sorted by name: what the prompt lists."""
        return [b for b in self.skills if b.ok]

    @property
    def skill_faults(self) -> list[SkillBinding]:
        return [b for b in self.skills if not b.ok]

    @property
    def readable_roots(self) -> tuple[Path, ...]:
        """Real paths of the valid bound skill folders (file reads there are allowed)."""
        return tuple(b.skill.directory for b in self.bound_skills if b.skill is not None)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-safe view; the API key shows its variable and whether it is set, never a value."""
        key = self.provider.api_key
        return {
            "name": self.name,
            "description": self.description,
            "directory": str(self.directory),
            "identity": self.identity.model_dump(),
            "provider": {
                "name": self.provider.name,
                "model": self.provider.model,
                "temperature": self.provider.temperature,
                "api_key": key.describe() if key else None,
                "api_key_set": key.is_set() if key else None,
            },
            "tools": list(self.tools),
            "mcp_servers": list(self.mcp_servers),
            "channels": [c.model_dump() for c in self.channels],
            "bootstrap": list(self.bootstrap),
            "settings": self.settings.model_dump(),
            "skills": [b.as_dict() for b in self.skills],
        }


def parse_agent(text: str, filename: str, directory_name: str) -> tuple[AgentFrontmatter, str]:
    """Validate AGENT.md text: (frontmatter, body) or FileProblemError naming file/key/line."""
    from oryxos.yamlfile import load_model, parse_yaml

    doc = split_frontmatter(text, filename)
    front = load_model(
        AgentFrontmatter,
        doc.frontmatter,
        filename,
        line_offset=doc.line_offset,
        keep_vars=lambda path: True,  # literal values; the api_key SecretRef resolves on use
        directory_name=directory_name,
    )
    if front.provider.api_key is not None:
        attach_origins(
            front, filename, parse_yaml(doc.frontmatter, filename, line_offset=doc.line_offset)
        )
        if front.provider.api_key.is_set():
            front.provider.api_key.resolve()  # registers the value with the log mask
    return front, doc.body


@functools.lru_cache(maxsize=256)
def _parse_agent_cached(text: str, filename: str, directory_name: str) -> tuple[Any, str]:
    """:func:`parse_agent` remembered by file text: agents are loaded on every turn (so edits
    apply at once), but YAML + validation of an unchanged file need not run each time."""
    return parse_agent(text, filename, directory_name)


def derive_profile(
    agent_dir: Path, *, skills_dir: Path | None = None, warn: bool = True
) -> Profile:
    """Read ``agent_dir/AGENT.md`` and its skill links into a Profile.

    A bad AGENT.md raises FileProblemError (file, key, line); faulty skill links do not raise —
    they are in ``profile.skills`` with their state, and logged as warnings.
    """
    agent_dir = Path(agent_dir)
    path = agent_dir / AGENT_FILENAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileProblemError([Problem(str(path), "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as err:
        raise FileProblemError([Problem(str(path), "", f"cannot read the file: {err}")]) from None
    front, body = _parse_agent_cached(text, str(path), agent_dir.name)
    skills_dir = skills_dir or agent_dir.parent.parent / "skills"
    bindings = inspect_bindings(
        agent_dir,
        skills_dir,
        workspace_dir=skills_dir.parent,
        instructions=body,
        agent_file=path,
        warn=warn,
    )
    return Profile(
        name=front.name,
        description=front.description,
        identity=front.identity,
        provider=front.provider,
        tools=list(front.tools),
        mcp_servers=list(front.mcp_servers),
        channels=list(front.channels),
        bootstrap=list(front.bootstrap),
        settings=front.settings,
        instructions=body,
        directory=agent_dir,
        skills=bindings,
    )


class AgentLoader:
    """Finds and loads the agents of one workspace. Reads the disk on every call, so edits to
    AGENT.md and skill links apply to the next turn without a restart."""

    def __init__(self, workspace: Workspace, *, warn: bool = True):
        self.workspace = workspace
        self.warn = warn  # log faulty skill bindings (off for commands that print them)

    def names(self) -> list[str]:
        """Directory names under ``agents/``, sorted (valid agents or not)."""
        try:
            entries = os.listdir(self.workspace.agents_dir)
        except OSError:
            return []
        return sorted(
            e for e in entries if not e.startswith(".") and (self.workspace.agents_dir / e).is_dir()
        )

    def directory(self, name: str) -> Path:
        return self.workspace.agents_dir / check_name(name, "agent")

    def exists(self, name: str) -> bool:
        return self.directory(name).is_dir()

    def load(self, name: str) -> Profile:
        """One agent's Profile; NotFoundError if there is no such directory."""
        directory = self.directory(name)
        if not directory.is_dir():
            known = ", ".join(self.names()) or "none"
            raise NotFoundError(
                f"no agent {name!r} in {self.workspace.agents_dir} (agents: {known})"
            )
        return derive_profile(directory, skills_dir=self.workspace.skills_dir, warn=self.warn)

    def list(self) -> tuple[list[Profile], list[Problem]]:
        """Every valid agent, and the problems of the others (which do not stop the rest)."""
        profiles: list[Profile] = []
        problems: list[Problem] = []
        for name in self.names():
            try:
                profiles.append(self.load(name))
            except FileProblemError as err:
                problems.extend(err.problems)
            except Exception as err:  # anything odd in one agent must not hide the others
                log.warning("agent %s cannot be loaded: %s", name, err, exc_info=True)
                problems.append(
                    Problem(str(self.workspace.agents_dir / name / AGENT_FILENAME), "", str(err))
                )
        return profiles, problems
