"""Skills: shared entities in ``.oryxos/skills/<name>/`` and the symlinks that bind them to agents.

A skill is a folder with a ``SKILL.md`` (YAML frontmatter with ``name`` and ``description``,
then Markdown instructions) and any resources or scripts it needs. An agent uses a skill only
through a *relative symlink* ``.oryxos/agents/<agent>/skills/<name>`` that reaches the entity;
the set of links is the only binding (AGENT.md has no ``skills:`` key).

Every check here works on real paths (:func:`os.path.realpath`, which follows chains of links),
so no binding can make the agent read anything outside ``.oryxos/skills/``. A faulty binding is
reported as a :class:`SkillBinding` with a fault state and skipped; it never raises.

Fault kinds (the values of :class:`BindingState`):

- ``dangling``: the link's target does not exist (or the links loop);
- ``escaped``: an absolute link anywhere in the chain, a hop that leaves the workspace, or a
  target whose real path is outside ``.oryxos/skills/`` (``/etc``, ``../../..``, a skill folder
  that is itself a link to elsewhere, a SKILL.md that links out of its folder);
- ``invalid-target``: the target is not a directory directly under ``.oryxos/skills/`` holding
  a valid SKILL.md;
- ``name-mismatch``: the link's name differs from the ``name`` in the target's SKILL.md;
- ``stale-reference``: something names a skill that is not bound — an entry of the agent's
  ``skills/`` that is not a symlink (a copied folder, a leftover file), or the AGENT.md body
  mentioning a library skill as ``skills/<name>`` or as inline code (`` `<name>` ``) while
  no valid link binds it (typically after ``oryxos skill unlink``).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from oryxos.errors import FileProblemError, Problem

log = logging.getLogger("oryxos.skills")

SKILL_FILENAME = "SKILL.md"
#: Names of agents and skills: a single path component, safe on every filesystem.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: How many links a chain may have before it counts as a loop (the Linux limit).
MAX_LINK_HOPS = 40


def check_name(name: str, kind: str) -> str:
    """``name`` if it is a valid agent/skill name, else a UsageError saying what is allowed."""
    from oryxos.errors import UsageError

    if not NAME_PATTERN.match(name or "") or name in (".", ".."):
        raise UsageError(
            f"invalid {kind} name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


# Frontmatter -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """A Markdown file split into its YAML frontmatter and its body."""

    frontmatter: str
    body: str
    #: Lines before the frontmatter's first line: add to a YAML line to get the file's line.
    line_offset: int


def split_frontmatter(text: str, filename: str) -> Document:
    """Split ``---``-delimited YAML frontmatter from the body; a clear error if there is none."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    if not lines or lines[0].rstrip() != "---":
        raise FileProblemError(
            [
                Problem(
                    filename,
                    "",
                    "no YAML frontmatter: the file must start with a line '---', then the "
                    "YAML keys, then a closing '---' line",
                    1,
                )
            ]
        )
    for index in range(1, len(lines)):
        if lines[index].rstrip() == "---":
            return Document("".join(lines[1:index]), "".join(lines[index + 1 :]).strip(), 1)
    raise FileProblemError(
        [Problem(filename, "", "the frontmatter is not closed: add a line '---' after it", 1)]
    )


class SkillMeta(BaseModel):
    """The frontmatter of SKILL.md (the Agent Skills format; unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(description="must equal the skill's folder name")
    description: str = Field(min_length=1, description="when to use the skill, in one sentence")
    license: str | None = None
    allowed_tools: list[str] | str | None = Field(default=None, alias="allowed-tools")
    metadata: dict[str, Any] = Field(default_factory=dict)
    resources: list[str] = Field(default_factory=list, description="files the skill refers to")
    scripts: list[str] = Field(default_factory=list, description="scripts the skill may run")


@dataclass(frozen=True)
class Skill:
    """A valid skill entity."""

    name: str
    description: str
    directory: Path  # real path of the skill's folder
    instructions: str

    @property
    def skill_file(self) -> Path:
        """Absolute path of SKILL.md: what the prompt tells the model to read."""
        return self.directory / SKILL_FILENAME

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "directory": str(self.directory),
            "skill_file": str(self.skill_file),
        }


def read_skill(directory: Path, *, expected_name: str | None = None) -> Skill:
    """Read and validate ``directory/SKILL.md``; FileProblemError naming file, key and line."""
    from oryxos.yamlfile import load_model

    path = directory / SKILL_FILENAME
    filename = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileProblemError([Problem(filename, "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as err:
        raise FileProblemError([Problem(filename, "", f"cannot read the file: {err}")]) from None
    doc = split_frontmatter(text, filename)
    # Nothing in SKILL.md is a secret or a variable: values are kept exactly as written.
    meta = load_model(
        SkillMeta,
        doc.frontmatter,
        filename,
        line_offset=doc.line_offset,
        keep_vars=lambda path: True,
    )
    if expected_name is not None and meta.name != expected_name:
        raise FileProblemError(
            [
                Problem(
                    filename,
                    "name",
                    f"is {meta.name!r} but the folder is named {expected_name!r}; "
                    "they must be equal",
                )
            ]
        )
    return Skill(meta.name, meta.description.strip(), directory, doc.body)


# The library -------------------------------------------------------------------------------


class SkillLibrary:
    """The shared skill entities of one workspace (``.oryxos/skills/``)."""

    def __init__(self, skills_dir: Path):
        self.skills_dir = Path(skills_dir)

    @property
    def real_dir(self) -> Path:
        return Path(os.path.realpath(self.skills_dir))

    def names(self) -> list[str]:
        """Names of the folders in the library (valid or not), sorted."""
        try:
            entries = os.listdir(self.skills_dir)
        except OSError:
            return []
        return sorted(e for e in entries if not e.startswith(".") and self._is_entity(e))

    def _is_entity(self, name: str) -> bool:
        path = self.skills_dir / name
        return path.is_dir() or path.is_symlink()

    def path(self, name: str) -> Path:
        return self.skills_dir / check_name(name, "skill")

    def load(self, name: str) -> Skill:
        """One valid skill by name: NotFoundError or FileProblemError otherwise."""
        from oryxos.errors import NotFoundError

        path = self.path(name)
        if not path.is_dir() and not path.is_symlink():
            known = ", ".join(self.names()) or "none"
            raise NotFoundError(f"no skill {name!r} in {self.skills_dir} (skills: {known})")
        real = Path(os.path.realpath(path))
        if real.parent != self.real_dir:
            raise FileProblemError(
                [Problem(str(path), "", f"resolves to {real}, outside {self.skills_dir}")]
            )
        return read_skill(real, expected_name=name)

    def list(self) -> tuple[list[Skill], list[Problem]]:
        """Every valid skill, and one problem per invalid one (the others still load)."""
        skills: list[Skill] = []
        problems: list[Problem] = []
        for name in self.names():
            try:
                skills.append(self.load(name))
            except FileProblemError as err:
                problems.extend(err.problems)
            except Exception as err:  # a broken entity must not hide the others
                problems.append(Problem(str(self.skills_dir / name), "", str(err)))
        return skills, problems


# Bindings ----------------------------------------------------------------------------------


class BindingState(StrEnum):
    """The state of one entry of an agent's ``skills/`` (or of one stale mention)."""

    OK = "ok"
    DANGLING = "dangling"
    ESCAPED = "escaped"
    INVALID_TARGET = "invalid-target"
    NAME_MISMATCH = "name-mismatch"
    STALE_REFERENCE = "stale-reference"


@dataclass(frozen=True)
class SkillBinding:
    """One skill binding of an agent, valid or faulty."""

    name: str  # the link's name (or the mentioned skill's name for a stale reference)
    state: BindingState
    path: Path  # the link (or the non-link entry, or AGENT.md for a mention)
    target: str | None = None  # the link's text as written
    skill: Skill | None = None  # set when state is OK
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.state is BindingState.OK

    def problem(self) -> Problem:
        """This fault as a Problem (file = the link, key = skills.<name>)."""
        return Problem(str(self.path), f"skills.{self.name}", f"{self.state.value}: {self.message}")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "state": self.state.value,
            "path": str(self.path),
            "target": self.target,
            "message": self.message,
        }
        if self.skill is not None:
            out["description"] = self.skill.description
            out["skill_file"] = str(self.skill.skill_file)
        return out


def _inside(path: str, root: str) -> bool:
    """Whether real path ``path`` is ``root`` or below it (both real, absolute)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _walk_chain(link: str, fence: str) -> tuple[str | None, BindingState, str]:
    """Follow a chain of symlinks hop by hop.

    Returns ``(None, ESCAPED, reason)`` for an absolute hop or a hop that leaves ``fence`` (the
    real path of the workspace), ``(None, DANGLING, reason)`` for a loop, else
    ``(final real path, OK, "")``.
    """
    current = link
    for _ in range(MAX_LINK_HOPS):
        if not os.path.islink(current):
            return os.path.realpath(current), BindingState.OK, ""
        text = os.readlink(current)
        if os.path.isabs(text):
            where = "" if current == link else f" (via {current})"
            reason = f"absolute link to {text}{where}; only relative links are allowed"
            return None, BindingState.ESCAPED, reason
        parent = os.path.realpath(os.path.dirname(current))
        current = os.path.normpath(os.path.join(parent, text))
        if not _inside(current, fence):
            return None, BindingState.ESCAPED, f"the link chain leaves the workspace at {current}"
    return None, BindingState.DANGLING, "too many levels of symbolic links (a loop?)"


def inspect_link(entry: Path, skills_dir: Path, workspace_dir: Path) -> SkillBinding:
    """Check one entry of an agent's ``skills/`` and say what it binds, or why it binds nothing."""
    name = entry.name
    if not entry.is_symlink():
        kind = "folder" if entry.is_dir() else "file"
        return SkillBinding(
            name,
            BindingState.STALE_REFERENCE,
            entry,
            message=f"a {kind}, not a symlink; only relative symlinks to "
            f"{skills_dir} bind skills (run 'oryxos skill link')",
        )
    target = os.readlink(entry)
    skills_real = os.path.realpath(skills_dir)
    final, state, reason = _walk_chain(str(entry), os.path.realpath(workspace_dir))
    if final is None:
        return SkillBinding(name, state, entry, target, message=reason)
    if not _inside(final, skills_real):
        return SkillBinding(
            name,
            BindingState.ESCAPED,
            entry,
            target,
            message=f"resolves to {final}, outside {skills_real}",
        )
    if not os.path.exists(final):
        return SkillBinding(
            name, BindingState.DANGLING, entry, target, message=f"target {final} does not exist"
        )
    if os.path.dirname(final) != skills_real or not os.path.isdir(final):
        return SkillBinding(
            name,
            BindingState.INVALID_TARGET,
            entry,
            target,
            message=f"{final} is not a skill folder directly under {skills_real}",
        )
    skill_file = os.path.join(final, SKILL_FILENAME)
    if os.path.islink(skill_file) and not _inside(os.path.realpath(skill_file), final):
        return SkillBinding(
            name,
            BindingState.ESCAPED,
            entry,
            target,
            message=f"{skill_file} links to {os.path.realpath(skill_file)}, outside the skill",
        )
    if not os.path.isfile(skill_file):
        return SkillBinding(
            name,
            BindingState.INVALID_TARGET,
            entry,
            target,
            message=f"{final} has no {SKILL_FILENAME}",
        )
    try:
        skill = read_skill(Path(final))
    except FileProblemError as err:
        return SkillBinding(
            name, BindingState.INVALID_TARGET, entry, target, message=f"invalid skill: {err}"
        )
    if skill.name != name:
        return SkillBinding(
            name,
            BindingState.NAME_MISMATCH,
            entry,
            target,
            message=f"the link is named {name!r} but {skill.skill_file} says name: {skill.name}",
        )
    return SkillBinding(name, BindingState.OK, entry, target, skill=skill)


def mentioned_skills(text: str, names: list[str]) -> list[str]:
    """Library skill names that ``text`` mentions as ``skills/<name>`` or `` `<name>` ``."""
    found = []
    for name in names:
        escaped = re.escape(name)
        pattern = rf"(?:skills/{escaped}(?![A-Za-z0-9._-]))|(?:`{escaped}`)"
        if re.search(pattern, text):
            found.append(name)
    return found


def inspect_bindings(
    agent_dir: Path,
    skills_dir: Path,
    *,
    workspace_dir: Path | None = None,
    instructions: str = "",
    agent_file: Path | None = None,
    warn: bool = True,
) -> list[SkillBinding]:
    """Every binding of one agent, valid and faulty, sorted by name; never raises.

    Reads only this agent's ``skills/`` entries, the targets they reach, and the names of the
    library's folders (for stale references) — never another agent's files. Each fault is
    logged as a warning once per process (``warn=False``: not at all, for commands that print
    the faults themselves), so a long-running server does not repeat it on every turn.
    """
    workspace_dir = workspace_dir or skills_dir.parent
    links_dir = agent_dir / "skills"
    bindings: list[SkillBinding] = []
    if links_dir.is_symlink():  # never list (or bind) whatever folder it points to
        bindings.append(
            SkillBinding(
                "skills",
                BindingState.ESCAPED,
                links_dir,
                os.readlink(links_dir),
                message="the agent's skills/ is itself a symlink; it must be a real folder "
                "holding one relative link per skill",
            )
        )
    try:
        entries = [] if bindings else sorted(os.listdir(links_dir))
    except FileNotFoundError:
        entries = []
    except OSError as err:
        log.warning("cannot list %s: %s", links_dir, err)
        entries = []
    for entry in entries:
        if entry.startswith("."):
            continue
        try:
            binding = inspect_link(links_dir / entry, skills_dir, workspace_dir)
        except OSError as err:  # permissions, races: report, never crash the agent
            binding = SkillBinding(
                entry,
                BindingState.DANGLING,
                links_dir / entry,
                message=f"cannot be checked: {err}",
            )
        bindings.append(binding)
    if instructions:
        bound = {b.name for b in bindings if b.ok}
        listed = {b.name for b in bindings}
        library = SkillLibrary(skills_dir).names()
        for name in mentioned_skills(instructions, library):
            if name in bound or name in listed:
                continue  # a faulty link is already reported under its own state
            bindings.append(
                SkillBinding(
                    name,
                    BindingState.STALE_REFERENCE,
                    agent_file or agent_dir / "AGENT.md",
                    message=f"the AGENT.md body mentions skill {name!r}, which this agent "
                    f"does not bind (run 'oryxos skill link {name} {agent_dir.name}' or "
                    "remove the mention)",
                )
            )
    for binding in bindings:
        if warn and not binding.ok:
            _warn_once(agent_dir.name, binding)
    return sorted(bindings, key=lambda b: (b.name, b.state.value))


_warned: set[tuple[str, str, str]] = set()
_warned_lock = threading.Lock()


def _warn_once(agent: str, binding: SkillBinding) -> None:
    key = (str(binding.path), binding.state.value, binding.message)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning("agent %s: skill binding skipped: %s", agent, binding.problem())


def agents_linking(agents_dir: Path, skill_dir: Path) -> list[str]:
    """Names of the agents with a ``skills/`` link whose real path is ``skill_dir``'s."""
    real = os.path.realpath(skill_dir)
    users: list[str] = []
    try:
        agents = sorted(os.listdir(agents_dir))
    except OSError:
        return []
    for agent in agents:
        links_dir = agents_dir / agent / "skills"
        try:
            entries = os.listdir(links_dir)
        except OSError:
            continue
        for entry in entries:
            link = links_dir / entry
            if link.is_symlink() and os.path.realpath(link) == real:
                users.append(agent)
                break
    return users


def link_paths(agents_dir: Path, skill_dir: Path) -> list[Path]:
    """Every agent link whose real path is ``skill_dir``'s (what ``skill delete --force`` drops)."""
    real = os.path.realpath(skill_dir)
    out: list[Path] = []
    for agent in agents_linking(agents_dir, skill_dir):
        links_dir = agents_dir / agent / "skills"
        for entry in sorted(os.listdir(links_dir)):
            link = links_dir / entry
            if link.is_symlink() and os.path.realpath(link) == real:
                out.append(link)
    return out


def relative_link_text(link: Path, skill_dir: Path) -> str:
    """The relative text of a link at ``link`` that reaches ``skill_dir`` (both un-resolved)."""
    return os.path.relpath(skill_dir, start=link.parent)
