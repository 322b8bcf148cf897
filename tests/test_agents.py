"""AGENT.md → Profile: validation with file/key/line, secrets, multi-agent isolation."""

from __future__ import annotations

import os

import pytest

from oryxos.agents import AgentLoader, derive_profile
from oryxos.errors import FileProblemError, NotFoundError, UsageError
from oryxos.secrets import SecretRef

FULL = """---
name: ops-agent
description: Operations helper
identity:
  agent_name: Ops
  prompt: You keep servers healthy.
provider:
  name: deepseek
  model: deepseek-chat
  temperature: 0.2
  api_key: ${TEST_OPS_KEY}
tools:
  - read_file
  - "@files"
mcp_servers:
  - github
channels:
  - name: cli
  - rest
bootstrap:
  - AGENTS.md
settings:
  max_iterations: 5
---

# Duties
Check disks. Literal ${NOT_EXPANDED} stays.
"""


def write_agent(ws, name, text):
    folder = ws.agents_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(text)
    return folder


def test_full_frontmatter_becomes_a_profile(oryxos_workspace, monkeypatch):
    monkeypatch.setenv("TEST_OPS_KEY", "sk-ops-secret-1234")
    folder = write_agent(oryxos_workspace, "ops-agent", FULL)
    profile = derive_profile(folder)
    assert profile.name == "ops-agent"
    assert profile.identity.agent_name == "Ops"
    assert profile.provider.name == "deepseek" and profile.provider.temperature == 0.2
    assert isinstance(profile.provider.api_key, SecretRef)
    assert profile.provider.api_key.resolve() == "sk-ops-secret-1234"
    assert (
        profile.provider.api_key.line == 11 and profile.provider.api_key.key == "provider.api_key"
    )
    assert profile.wanted_tools() == ["read_file", "@files", "@mcp:github"]
    assert [c.name for c in profile.channels] == ["cli", "rest"]
    assert profile.bootstrap == ["AGENTS.md"]
    assert profile.settings.max_iterations == 5 and profile.settings.max_history_turns == 20
    assert profile.instructions.startswith("# Duties")
    assert "${NOT_EXPANDED}" in profile.instructions
    dumped = repr(profile.as_dict())
    assert "sk-ops-secret-1234" not in dumped
    assert profile.as_dict()["provider"]["api_key"] == "${TEST_OPS_KEY}"
    assert profile.as_dict()["provider"]["api_key_set"] is True


def test_defaults(oryxos_workspace):
    folder = write_agent(oryxos_workspace, "tiny", "---\nname: tiny\n---\nHi.\n")
    profile = derive_profile(folder)
    assert profile.bootstrap == ["AGENTS.md", "SOUL.md", "USER.md"]
    assert profile.settings.max_iterations == 10
    assert profile.settings.max_history_turns == 20
    assert profile.tools == [] and profile.wanted_tools() == []
    assert profile.provider.api_key is None


def test_other_values_are_literal(oryxos_workspace, monkeypatch):
    monkeypatch.setenv("TEST_MODEL", "expanded")
    text = "---\nname: lit\nprovider:\n  model: ${TEST_MODEL}\n---\n"
    profile = derive_profile(write_agent(oryxos_workspace, "lit", text))
    assert profile.provider.model == "${TEST_MODEL}"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("no frontmatter\n", "AGENT.md:1: no YAML frontmatter"),
        ("---\nname: bad\ntools: [a\n---\n", "AGENT.md:4: YAML syntax error"),
        (
            "---\nname: bad\ndescription: x\nsetings: {}\n---\n",
            "AGENT.md:4: setings: unknown key; did you mean 'settings'?",
        ),
        (
            "---\nname: bad\nsettings:\n  max_iterations: lots\n---\n",
            "AGENT.md:4: settings.max_iterations: input should be a valid integer",
        ),
        (
            "---\nname: other\n---\n",
            "AGENT.md:2: name: Value error, is 'other' but the directory is named 'bad'",
        ),
        ("---\ndescription: x\n---\n", "AGENT.md:2: name: is required"),
        (
            "---\nname: bad\nprovider:\n  api_key: sk-literal-key-999\n---\n",
            "AGENT.md:4: provider.api_key: Value error, must be an environment reference",
        ),
        (
            "---\nname: bad\nbootstrap: [../../etc/passwd]\n---\n",
            "AGENT.md:3: bootstrap: Value error, '../../etc/passwd' must be a file name",
        ),
        (
            "---\nname: bad\nskills: [weather]\n---\n",
            "AGENT.md:3: skills: unknown key",
        ),
    ],
)
def test_bad_agent_md_is_one_clear_message(oryxos_workspace, text, expected):
    folder = write_agent(oryxos_workspace, "bad", text)
    with pytest.raises(FileProblemError) as err:
        derive_profile(folder)
    message = str(err.value)
    assert expected in message, message
    assert str(folder / "AGENT.md") in message
    assert "sk-literal-key-999" not in message
    assert "Traceback" not in message


def test_list_keeps_loading_after_a_bad_agent(oryxos_workspace):
    write_agent(oryxos_workspace, "a-good", "---\nname: a-good\n---\nA\n")
    write_agent(oryxos_workspace, "b-bad", "---\nname: b-bad\nbogus: 1\n---\n")
    (oryxos_workspace.agents_dir / "c-empty").mkdir()
    write_agent(oryxos_workspace, "d-good", "---\nname: d-good\n---\nD\n")
    profiles, problems = AgentLoader(oryxos_workspace).list()
    assert [p.name for p in profiles] == ["a-good", "d-good", "default"]
    text = "\n".join(str(p) for p in problems)
    assert "b-bad/AGENT.md:3: bogus: unknown key" in text
    assert "c-empty/AGENT.md: file not found" in text


def test_loading_one_agent_never_reads_another(oryxos_workspace, monkeypatch):
    """Record every file opened while loading one agent (works as root, unlike chmod 0)."""
    import builtins
    import io
    import pathlib

    write_agent(oryxos_workspace, "mine", "---\nname: mine\n---\nMine.\n")
    other = write_agent(oryxos_workspace, "other", "---\nname: other\nbroken: [\n---\n")
    opened: list[str] = []
    real_open = builtins.open

    def spy_open(file, *args, **kwargs):
        opened.append(os.path.realpath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)
    original_read_text = pathlib.Path.read_text

    def spy_read_text(self, *args, **kwargs):
        opened.append(os.path.realpath(self))
        return original_read_text(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "read_text", spy_read_text)
    profile = AgentLoader(oryxos_workspace).load("mine")
    assert profile.name == "mine"
    assert opened, "the spy saw nothing: the test would prove nothing"
    other_real = os.path.realpath(other)
    assert not [p for p in opened if p.startswith(other_real)]


def test_load_unknown_and_invalid_names(oryxos_workspace):
    loader = AgentLoader(oryxos_workspace)
    with pytest.raises(NotFoundError, match=r"no agent 'nope'.*agents: default"):
        loader.load("nope")
    with pytest.raises(UsageError, match="invalid agent name"):
        loader.load("../default")


def test_runtime_agents(oryxos_runtime):
    assert oryxos_runtime.agents.load("default").name == "default"


def test_an_edited_agent_md_applies_to_the_next_load(oryxos_workspace):
    from oryxos.agents import AgentLoader

    loader = AgentLoader(oryxos_workspace)
    first = loader.load("default")
    path = first.directory / "AGENT.md"
    path.write_text(path.read_text().replace(first.description, "Edited description."))
    assert loader.load("default").description == "Edited description."
    path.write_text("---\nname: default\ndescription: [unclosed\n---\nbody\n")
    import pytest

    from oryxos.errors import FileProblemError

    with pytest.raises(FileProblemError, match="AGENT.md:[34]: YAML syntax error"):
        loader.load("default")
