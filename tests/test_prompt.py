"""PromptBuilder: order of the parts, progressive disclosure, memory, history windows, tools."""

from __future__ import annotations

import os

import pytest

from oryxos.prompt import Prompt, PromptBuilder, last_turns, read_bootstrap
from oryxos.runtime import Runtime
from oryxos.tools import tool

AGENT = """---
name: helper
identity:
  agent_name: Hera
  prompt: You are precise.
settings:
  max_history_turns: 2
---

Answer questions about the fleet.
"""


@pytest.fixture
def ws(oryxos_workspace):
    folder = oryxos_workspace.agents_dir / "helper"
    (folder / "skills").mkdir(parents=True)
    (folder / "AGENT.md").write_text(AGENT)
    for name, description in (("zeta", "Last skill."), ("alpha", "First skill.")):
        skill = oryxos_workspace.skills_dir / name
        skill.mkdir()
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nBODY-OF-{name}\n"
        )
        os.symlink(f"../../../skills/{name}", folder / "skills" / name)
    os.symlink("/etc", folder / "skills" / "etc")
    return oryxos_workspace


class FakeMemory:
    def __init__(self):
        self.asked: list[int] = []

    def for_prompt(self, max_chars):
        self.asked.append(max_chars)
        return "- 2026-11-30: the user prefers Celsius"


def runtime_for(ws, oryxos_make_pm, inline_plugins=()):
    return Runtime.load(ws, oryxos_make_pm(list(inline_plugins), entry_points=False))


@tool
def beta_tool(x: int) -> str:
    """Beta."""
    return str(x)


@tool
def alpha_tool(y: str) -> str:
    """Alpha."""
    return y


def test_system_prompt_order_and_progressive_disclosure(ws, oryxos_make_pm):
    runtime = runtime_for(ws, oryxos_make_pm)
    profile = runtime.agents.load("helper")
    prompt = PromptBuilder(runtime).build(profile, [{"role": "user", "content": "hi"}], [])
    system = prompt.system
    assert prompt.messages[0]["role"] == "system"
    assert system.startswith('You are Hera, the OryxOS agent "helper". You are precise.')
    order = [
        system.index("Answer questions about the fleet."),
        system.index("## Skills"),
        system.index("- alpha: First skill."),
        system.index("- zeta: Last skill."),
        system.index("## AGENTS.md"),
        system.index("## SOUL.md"),
    ]
    assert order == sorted(order)
    skill_file = os.path.realpath(ws.skills_dir / "alpha" / "SKILL.md")
    assert f"- alpha: First skill. ({skill_file})" in system
    assert "read_file" in system
    assert "BODY-OF-" not in system  # never preloaded
    assert "/etc" not in system  # a faulty binding is never shown
    assert "use_skill" not in system
    # The templates' headings and hints are HTML comments, which are dropped; USER.md holds
    # nothing else until someone writes in it, so its section is left out altogether.
    assert "<!--" not in system and "## USER.md" not in system


def test_prompt_is_deterministic(ws, oryxos_make_pm):
    runtime = runtime_for(ws, oryxos_make_pm)
    builder = PromptBuilder(runtime)
    history = [{"role": "user", "content": "hi"}]
    first = builder.build(runtime.agents.load("helper"), history, [beta_tool, alpha_tool])
    second = builder.build(runtime.agents.load("helper"), history, [alpha_tool, beta_tool])
    assert first == second
    assert [t["function"]["name"] for t in first.tools] == ["alpha_tool", "beta_tool"]
    assert first.tools[1]["function"]["parameters"]["properties"]["x"]["type"] == "integer"


def test_memory_comes_last_in_the_system_message(ws, oryxos_make_pm, oryxos_inline_plugin):
    memory = FakeMemory()
    plugin = oryxos_inline_plugin(
        "fake-memory",
        oryxos_register_memory=lambda register, config: register("markdown", lambda rt: memory),
    )
    runtime = runtime_for(ws, oryxos_make_pm, [plugin])
    system = PromptBuilder(runtime).build(runtime.agents.load("helper"), [], []).system
    assert system.endswith("## Long-term memory\n- 2026-11-30: the user prefers Celsius")
    assert memory.asked == [runtime.config.memory.max_prompt_chars] == [4000]


def test_no_memory_plugin_no_memory_section(ws, oryxos_make_pm):
    runtime = runtime_for(ws, oryxos_make_pm)
    assert runtime.memory is None
    assert (
        "## Long-term memory"
        not in PromptBuilder(runtime).build(runtime.agents.load("helper"), [], []).system
    )


def test_history_keeps_the_last_turns_and_tool_results_with_their_calls(ws, oryxos_make_pm):
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
        ],
    }
    history = [
        {"role": "user", "content": "turn 1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "turn 2"},
        call,
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "assistant", "content": "a2"},
        {"role": "user", "content": "turn 3"},
    ]
    runtime = runtime_for(ws, oryxos_make_pm)
    prompt = PromptBuilder(runtime).build(runtime.agents.load("helper"), history, [])
    assert prompt.messages[1:] == history[2:]  # max_history_turns: 2


def test_last_turns_edge_cases():
    orphan = [
        {"role": "tool", "tool_call_id": "x", "content": "r"},
        {"role": "user", "content": "u"},
    ]
    assert last_turns(orphan, 5) == orphan[1:]
    assert last_turns([], 3) == []
    three = [{"role": "user", "content": str(i)} for i in range(3)]
    assert last_turns(three, 1) == three[2:]
    assert last_turns(three, 3) == three


def test_bootstrap_skips_missing_and_escaping_files(ws, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP SECRET")
    os.symlink(outside, ws.path / "LEAK.md")
    (ws.path / "SOUL.md").unlink()
    (ws.path / "USER.md").write_text("<!-- hint -->\nI am Ana, on call this week.")
    got = read_bootstrap(ws.path, ["AGENTS.md", "SOUL.md", "LEAK.md", "USER.md"])
    names = [name for name, _ in got]
    assert names == ["AGENTS.md", "USER.md"]
    assert all("TOP SECRET" not in text for _, text in got)
    assert dict(got)["USER.md"] == "I am Ana, on call this week."


def test_prompt_dataclass_system_property():
    assert Prompt([]).system == ""


def test_identity_without_agent_name_or_body_uses_the_description(ws, oryxos_make_pm):
    folder = ws.agents_dir / "plain"
    folder.mkdir()
    (folder / "AGENT.md").write_text("---\nname: plain\ndescription: Sorts tickets.\n---\n")
    runtime = runtime_for(ws, oryxos_make_pm)
    system = PromptBuilder(runtime).build(runtime.agents.load("plain"), [], []).system
    assert system.startswith('You are the OryxOS agent "plain". Sorts tickets.')
    assert "## Skills" not in system


def test_bootstrap_follows_symlinks_inside_the_workspace_and_skips_folders(ws, caplog):
    (ws.path / "notes").mkdir()
    (ws.path / "notes" / "soul.md").write_text("Be brief.")
    (ws.path / "SOUL.md").unlink()
    os.symlink(ws.path / "notes" / "soul.md", ws.path / "SOUL.md")
    (ws.path / "USER.md").unlink()
    (ws.path / "USER.md").mkdir()
    got = dict(read_bootstrap(ws.path, ["SOUL.md", "USER.md"]))
    assert got == {"SOUL.md": "Be brief."}
    assert "USER.md cannot be read" in caplog.text
