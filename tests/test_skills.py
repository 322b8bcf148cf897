"""Skill bindings: real symlinks in a temporary workspace, one test per fault kind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from oryxos.agents import derive_profile
from oryxos.errors import FileProblemError
from oryxos.skills import (
    BindingState,
    SkillLibrary,
    agents_linking,
    inspect_bindings,
    read_skill,
    split_frontmatter,
)

AGENT_MD = "---\nname: {name}\ndescription: test agent\ntools: [read_file]\n---\n\n{body}\n"


def make_skill(ws, name, *, declared=None, description="Does things."):
    folder = ws.skills_dir / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {declared or name}\ndescription: {description}\n---\n\n"
        f"# {name}\nSecret body.\n"
    )
    return folder


def make_agent(ws, name, body="Help."):
    folder = ws.agents_dir / name
    (folder / "skills").mkdir(parents=True, exist_ok=True)
    (folder / "AGENT.md").write_text(AGENT_MD.format(name=name, body=body))
    return folder


def link(agent_dir: Path, name: str, target: str) -> Path:
    path = agent_dir / "skills" / name
    os.symlink(target, path)
    return path


def states(ws, agent_dir, body=""):
    bindings = inspect_bindings(agent_dir, ws.skills_dir, instructions=body)
    return {b.name: b for b in bindings}


@pytest.fixture
def ws(oryxos_workspace):
    return oryxos_workspace


def test_a_relative_link_binds_the_skill(ws):
    skill = make_skill(ws, "weather")
    agent = make_agent(ws, "bot")
    link(agent, "weather", "../../../skills/weather")
    binding = states(ws, agent)["weather"]
    assert binding.state is BindingState.OK, binding.message
    assert binding.skill.directory == Path(os.path.realpath(skill))
    assert binding.skill.description == "Does things."
    assert binding.skill.skill_file.is_absolute()


def test_dangling_link(ws):
    agent = make_agent(ws, "bot")
    link(agent, "gone", "../../../skills/gone")
    binding = states(ws, agent)["gone"]
    assert binding.state is BindingState.DANGLING
    assert "does not exist" in binding.message


def test_absolute_link_is_escaped_even_when_it_points_into_skills(ws):
    skill = make_skill(ws, "weather")
    agent = make_agent(ws, "bot")
    link(agent, "weather", str(skill))
    binding = states(ws, agent)["weather"]
    assert binding.state is BindingState.ESCAPED
    assert "absolute" in binding.message


def test_link_to_etc_is_escaped(ws):
    agent = make_agent(ws, "bot")
    link(agent, "etc", "/etc")
    binding = states(ws, agent)["etc"]
    assert binding.state is BindingState.ESCAPED
    assert binding.skill is None


def test_link_climbing_out_with_dotdot_is_escaped(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: outside\ndescription: evil\n---\nbody\n")
    agent = make_agent(ws, "bot")
    # agents/bot/skills/outside -> ../../../../outside  (out of .oryxos into the project dir)
    link(agent, "outside", "../../../../outside")
    binding = states(ws, agent)["outside"]
    assert binding.state is BindingState.ESCAPED
    assert binding.skill is None


def test_relative_link_climbing_to_etc_is_escaped(ws):
    agent = make_agent(ws, "bot")
    depth = len(Path(os.path.realpath(agent / "skills")).parts) - 1
    link(agent, "etc", "/".join([".."] * depth) + "/etc")
    assert states(ws, agent)["etc"].state is BindingState.ESCAPED


def test_chain_of_links_ending_outside_is_escaped(ws, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: hop\ndescription: x\n---\n")
    # skills/hop is itself a symlink to a folder outside the workspace
    os.symlink(outside, ws.skills_dir / "hop")
    agent = make_agent(ws, "bot")
    link(agent, "hop", "../../../skills/hop")
    binding = states(ws, agent)["hop"]
    assert binding.state is BindingState.ESCAPED


def test_chain_of_relative_links_inside_the_workspace_is_followed(ws):
    make_skill(ws, "weather")
    os.symlink("weather", ws.skills_dir / "weather-alias")
    agent = make_agent(ws, "bot")
    link(agent, "weather", "../../../skills/weather-alias")
    assert states(ws, agent)["weather"].state is BindingState.OK


def test_chain_through_an_absolute_hop_is_escaped(ws):
    skill = make_skill(ws, "weather")
    os.symlink(skill, ws.path / "abs-hop")  # absolute, though it lands inside skills/
    agent = make_agent(ws, "bot")
    link(agent, "weather", "../../../abs-hop")
    binding = states(ws, agent)["weather"]
    assert binding.state is BindingState.ESCAPED
    assert "absolute" in binding.message


def test_link_loop_is_dangling_not_a_crash(ws):
    os.symlink("loop-b", ws.skills_dir / "loop-a")
    os.symlink("loop-a", ws.skills_dir / "loop-b")
    agent = make_agent(ws, "bot")
    link(agent, "loop-a", "../../../skills/loop-a")
    assert states(ws, agent)["loop-a"].state is BindingState.DANGLING


def test_invalid_targets(ws):
    (ws.skills_dir / "empty").mkdir()
    (ws.skills_dir / "file.txt").write_text("x")
    make_skill(ws, "nested")
    (ws.skills_dir / "nested" / "sub").mkdir()
    (ws.skills_dir / "bad").mkdir()
    (ws.skills_dir / "bad" / "SKILL.md").write_text("no frontmatter here\n")
    agent = make_agent(ws, "bot")
    link(agent, "empty", "../../../skills/empty")
    link(agent, "file.txt", "../../../skills/file.txt")
    link(agent, "sub", "../../../skills/nested/sub")
    link(agent, "bad", "../../../skills/bad")
    found = states(ws, agent)
    for name in ("empty", "file.txt", "sub", "bad"):
        assert found[name].state is BindingState.INVALID_TARGET, (name, found[name])
    assert "no SKILL.md" in found["empty"].message
    assert "frontmatter" in found["bad"].message


def test_skill_md_linking_out_of_its_folder_is_escaped(ws):
    folder = ws.skills_dir / "sneaky"
    folder.mkdir()
    os.symlink("/etc/hostname", folder / "SKILL.md")
    agent = make_agent(ws, "bot")
    link(agent, "sneaky", "../../../skills/sneaky")
    assert states(ws, agent)["sneaky"].state is BindingState.ESCAPED


def test_name_mismatch(ws):
    make_skill(ws, "weather")
    make_skill(ws, "forecast", declared="weather-v2")
    agent = make_agent(ws, "bot")
    link(agent, "meteo", "../../../skills/weather")  # link name differs from SKILL.md name
    link(agent, "forecast", "../../../skills/forecast")  # SKILL.md name differs from folder
    found = states(ws, agent)
    assert found["meteo"].state is BindingState.NAME_MISMATCH
    assert found["forecast"].state is BindingState.NAME_MISMATCH


def test_stale_references(ws):
    make_skill(ws, "weather")
    make_skill(ws, "disk")
    agent = make_agent(ws, "bot")
    (agent / "skills" / "copied").mkdir()  # a copy, not a link
    body = "Use `weather` for forecasts and read skills/disk/SKILL.md for disks."
    found = states(ws, agent, body)
    assert found["copied"].state is BindingState.STALE_REFERENCE
    assert "not a symlink" in found["copied"].message
    assert found["weather"].state is BindingState.STALE_REFERENCE
    assert found["disk"].state is BindingState.STALE_REFERENCE
    link(agent, "weather", "../../../skills/weather")
    found = states(ws, agent, body)
    assert found["weather"].state is BindingState.OK
    assert found["disk"].state is BindingState.STALE_REFERENCE


def test_a_plain_word_is_not_a_stale_reference(ws):
    make_skill(ws, "weather")
    agent = make_agent(ws, "bot")
    assert "weather" not in states(ws, agent, "Talk about the weather politely.")


def test_a_skills_folder_that_is_itself_a_link_is_never_listed(ws):
    agent = make_agent(ws, "bot")
    (agent / "skills").rmdir()
    os.symlink("/etc", agent / "skills")
    found = states(ws, agent)
    assert list(found) == ["skills"]
    assert found["skills"].state is BindingState.ESCAPED


def test_faulty_bindings_never_reach_the_profile_roots(ws):
    make_skill(ws, "weather")
    agent = make_agent(ws, "bot")
    link(agent, "weather", "../../../skills/weather")
    link(agent, "etc", "/etc")
    link(agent, "gone", "../../../skills/gone")
    profile = derive_profile(agent)
    assert [b.name for b in profile.bound_skills] == ["weather"]
    assert profile.readable_roots == (Path(os.path.realpath(ws.skills_dir / "weather")),)
    assert {b.name for b in profile.skill_faults} == {"etc", "gone"}


def test_library_lists_valid_skills_and_problems(ws):
    make_skill(ws, "weather")
    make_skill(ws, "wrong", declared="other")
    skills, problems = SkillLibrary(ws.skills_dir).list()
    assert [s.name for s in skills] == ["weather"]
    assert len(problems) == 1 and "folder is named 'wrong'" in str(problems[0])


def test_skill_md_errors_name_file_key_and_line(ws):
    folder = ws.skills_dir / "typo"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: typo\ndescripton: x\n---\n")
    with pytest.raises(FileProblemError) as err:
        read_skill(folder)
    text = str(err.value)
    assert f"{folder / 'SKILL.md'}:3: descripton: unknown key; did you mean 'description'?" in text


def test_frontmatter_must_be_closed():
    with pytest.raises(FileProblemError, match="not closed"):
        split_frontmatter("---\nname: x\n", "X.md")


def test_agents_linking_uses_real_paths(ws):
    make_skill(ws, "weather")
    a = make_agent(ws, "a")
    b = make_agent(ws, "b")
    make_agent(ws, "c")
    link(a, "weather", "../../../skills/weather")
    link(b, "w", "../../../skills/weather")
    assert agents_linking(ws.agents_dir, ws.skills_dir / "weather") == ["a", "b"]


def test_library_refuses_a_skill_folder_that_links_outside(ws, tmp_path):
    outside = tmp_path / "outside-skill"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: ext\ndescription: x\n---\n")
    os.symlink(outside, ws.skills_dir / "ext")
    skills, problems = SkillLibrary(ws.skills_dir).list()
    assert skills == []
    assert "outside" in str(problems[0]) and "ext" in problems[0].file
