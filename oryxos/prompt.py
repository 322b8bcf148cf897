"""The PromptBuilder: what the model receives on every call of a turn.

Order, fixed so that providers' prompt caches hit (the stable part comes first):

1. the system message: identity, the AGENT.md body, the bound skills' metadata (name,
   description, absolute SKILL.md path — never the body: the model reads it with ``read_file``
   when it needs it), then the bootstrap files of the workspace (AGENTS.md, SOUL.md, USER.md by
   default);
2. long-term memory from the memory plugin, at the end of the system message (it changes more
   often than the rest), cut to ``memory.max_prompt_chars`` by the plugin;
3. the last ``settings.max_history_turns`` turns of the conversation — a turn starts at a user
   message, so an assistant's tool calls and their results are never separated;
4. the agent's tools as function schemas, sorted by name.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oryxos.agents import Profile
    from oryxos.runtime import Runtime
    from oryxos.tools import Tool

log = logging.getLogger("oryxos.prompt")

#: A bootstrap file longer than this is cut (with a note): it is sent on every request.
MAX_BOOTSTRAP_CHARS = 20_000
#: Bootstrap files the agent may read but must not change.
READ_ONLY_BOOTSTRAP = frozenset({"USER.md"})

SKILLS_INTRO = (
    "Skills are folders of instructions on disk. When a task matches a skill's description, "
    "first read its SKILL.md with read_file and follow it; read the skill's other files only "
    "when SKILL.md points to them."
)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass
class Prompt:
    """What one provider call sends: chat messages (OpenAI format) and function schemas."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)

    @property
    def system(self) -> str:
        """The text of the system message."""
        return str(self.messages[0]["content"]) if self.messages else ""


def last_turns(history: Sequence[dict[str, Any]], max_turns: int) -> list[dict[str, Any]]:
    """The last ``max_turns`` turns of ``history``; a turn starts at a ``user`` message.

    Cutting only at user messages keeps every assistant message with ``tool_calls`` together
    with its ``tool`` results. Leading ``tool`` messages without their call (from a history
    that was already cut elsewhere) are dropped, since providers reject them.
    """
    messages = list(history)
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    begin = starts[-max_turns] if max_turns > 0 and len(starts) > max_turns else 0
    if max_turns <= 0:
        begin = len(messages)
    while begin < len(messages) and messages[begin].get("role") == "tool":
        begin += 1
    return messages[begin:]


def read_bootstrap(workspace_dir: Path, names: Sequence[str]) -> list[tuple[str, str]]:
    """``(name, text)`` of each bootstrap file that exists, in the given order.

    A missing or empty file is skipped; one whose real path leaves the workspace (a symlink to
    elsewhere) is skipped with a warning. HTML comments (template hints) are dropped.
    This runs on every turn: a missing file costs one ``lstat``, and the real path is only
    worked out for names that are symlinks or lie in a sub-folder.
    """
    root: str | None = None
    out: list[tuple[str, str]] = []
    for name in names:
        path = os.path.join(workspace_dir, name)
        try:
            plain = stat.S_ISREG(os.lstat(path).st_mode)
        except FileNotFoundError:
            continue
        except OSError as err:
            log.warning("bootstrap file %s cannot be read: %s", path, err)
            continue
        real = path
        if not plain or os.sep in name or (os.altsep and os.altsep in name):
            root = root or os.path.realpath(workspace_dir)
            real = os.path.realpath(path)
            if not real.startswith(root.rstrip(os.sep) + os.sep):
                log.warning(
                    "bootstrap file %s resolves to %s, outside the workspace: skipped", path, real
                )
                continue
        try:
            with open(real, encoding="utf-8") as handle:
                text = handle.read(MAX_BOOTSTRAP_CHARS + 1)
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as err:
            log.warning("bootstrap file %s cannot be read: %s", path, err)
            continue
        if len(text) > MAX_BOOTSTRAP_CHARS:
            text = text[:MAX_BOOTSTRAP_CHARS] + f"\n[cut at {MAX_BOOTSTRAP_CHARS} characters]"
        if "<!--" in text:
            text = _HTML_COMMENT.sub("", text)
        text = text.strip()
        if text:
            out.append((name, text))
    return out


def _tool_schema(item: Tool | dict[str, Any]) -> dict[str, Any]:
    return item if isinstance(item, dict) else item.function_schema()


def _schema_name(schema: dict[str, Any]) -> str:
    return str(schema.get("function", {}).get("name", schema.get("name", "")))


class PromptBuilder:
    """Builds the :class:`Prompt` of one provider call for one agent."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    def identity(self, profile: Profile) -> str:
        who = profile.identity.agent_name
        head = (
            f'You are {who}, the OryxOS agent "{profile.name}".'
            if who
            else (f'You are the OryxOS agent "{profile.name}".')
        )
        parts = [head]
        if profile.identity.prompt:
            parts.append(profile.identity.prompt.strip())
        if not profile.instructions and profile.description:
            parts.append(profile.description.strip())
        return " ".join(parts)

    def skills_section(self, profile: Profile) -> str:
        lines = []
        for binding in profile.bound_skills:  # valid ones only, sorted by name
            skill = binding.skill
            assert skill is not None
            lines.append(f"- {skill.name}: {skill.description} ({skill.skill_file})")
        if not lines:
            return ""
        return "## Skills\n" + SKILLS_INTRO + "\n" + "\n".join(lines)

    def bootstrap_section(self, profile: Profile) -> str:
        parts = []
        for name, text in read_bootstrap(self.runtime.workspace.path, profile.bootstrap):
            note = " (read-only: maintained by the user)" if name in READ_ONLY_BOOTSTRAP else ""
            parts.append(f"## {name}{note}\n{text}")
        return "\n\n".join(parts)

    def memory_section(self) -> str:
        memory = self.runtime.memory
        if memory is None:
            return ""
        try:
            text = memory.for_prompt(self.runtime.config.memory.max_prompt_chars)
        except Exception as err:  # a broken memory file must not stop the agent from answering
            log.warning("long-term memory left out of the prompt: %s", err)
            return ""
        text = (text or "").strip()
        return f"## Long-term memory\n{text}" if text else ""

    def system_prompt(self, profile: Profile) -> str:
        """[1] identity + instructions + skills + bootstrap, then [2] memory."""
        sections = [
            self.identity(profile),
            profile.instructions.strip(),
            self.skills_section(profile),
            self.bootstrap_section(profile),
            self.memory_section(),
        ]
        return "\n\n".join(s for s in sections if s)

    def build(
        self,
        profile: Profile,
        history: Sequence[dict[str, Any]],
        tools: Sequence[Tool | dict[str, Any]] = (),
        *,
        system: str | None = None,
    ) -> Prompt:
        """The messages and tool schemas for one provider call.

        ``system`` reuses a system prompt built earlier (the loop builds it once per turn:
        every call of a turn then sends the same prefix, which providers' prompt caches hit).
        """
        if system is None:
            system = self.system_prompt(profile)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
        messages += last_turns(history, profile.settings.max_history_turns)
        schemas = sorted((_tool_schema(t) for t in tools), key=_schema_name)
        return Prompt(messages, schemas)
