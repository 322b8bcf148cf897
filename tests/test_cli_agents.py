"""``oryxos profile ...`` and ``oryxos skill ...`` on a copy of examples/agents-demo."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from oryxos.testing import CliInvoker
from oryxos.workspace import Workspace

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "agents-demo" / ".oryxos"
FAULTS = {"escaped", "dangling", "invalid-target", "name-mismatch", "stale-reference"}


@pytest.fixture
def demo(tmp_path) -> CliInvoker:
    target = tmp_path / "project" / ".oryxos"
    shutil.copytree(EXAMPLE, target, symlinks=True, ignore=shutil.ignore_patterns("oryxos.db*"))
    return CliInvoker(Workspace(target))


def run(cli: CliInvoker, *args: str, code: int = 0, **kwargs):
    result = cli.invoke(list(args), **kwargs)
    assert result.exit_code == code, result.output
    return result


def break_weather(ws: Workspace) -> None:
    """One binding of each fault kind on the weather agent."""
    links = ws.agents_dir / "weather" / "skills"
    os.symlink("/etc", links / "etc")  # escaped (absolute)
    os.symlink("../../../../..", links / "climb")  # escaped (climbs out)
    os.symlink("../../../skills/nope", links / "gone")  # dangling
    (ws.skills_dir / "empty").mkdir()
    os.symlink("../../../skills/empty", links / "empty")  # invalid-target
    os.symlink("../../../skills/disk-triage", links / "meteo")  # name-mismatch
    (links / "copied").mkdir()  # stale-reference (not a link)
    agent_md = ws.agents_dir / "weather" / "AGENT.md"
    agent_md.write_text(agent_md.read_text() + "\nWrite reports with `incident-report`.\n")


def test_example_workspace_is_healthy(demo):
    listed = json.loads(run(demo, "profile", "list", "--json").output)
    assert [a["name"] for a in listed["agents"]] == ["ops-agent", "weather"]
    assert listed["problems"] == []
    assert all(a["skill_faults"] == [] for a in listed["agents"])
    assert listed["agents"][0]["skills"] == ["disk-triage", "incident-report"]
    skills = json.loads(run(demo, "skill", "list", "--json").output)
    assert len(skills["skills"]) >= 2 and skills["binding_faults"] == []
    for link in (demo.workspace.agents_dir).glob("*/skills/*"):
        assert link.is_symlink() and not os.path.isabs(os.readlink(link)), link


def test_profile_show_text_and_json(demo, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-never-printed-4242")
    agent_md = demo.workspace.agents_dir / "weather" / "AGENT.md"
    agent_md.write_text(
        agent_md.read_text().replace("  temperature: 0.3\n", "  api_key: ${DEEPSEEK_API_KEY}\n")
    )
    text = run(demo, "profile", "show", "weather").output
    assert "ok              weather-report" in text
    assert "key ${DEEPSEEK_API_KEY} set" in text
    assert "available       http_get" in text  # from the built-in http plugin
    data = json.loads(run(demo, "profile", "show", "weather", "--json").output)
    assert data["provider"]["api_key"] == "${DEEPSEEK_API_KEY}"
    assert data["provider"]["api_key_set"] is True
    assert data["provider"]["configured"] is True
    assert data["skills"][0]["state"] == "ok"
    assert data["resolved_tools"]["available"] == ["current_time", "http_get"]
    for output in (text, json.dumps(data)):
        assert "sk-never-printed-4242" not in output


def test_profile_show_resolves_tools_through_the_catalog(demo, oryxos_inline_plugin):
    def register(catalog, config):
        catalog.register("http_get", builder=lambda ctx: None, groups="http")
        catalog.register("current_time", builder=lambda ctx: None, available=lambda ctx: False)

    plugin = oryxos_inline_plugin("fake-tools", oryxos_register_tools=register)
    builtins_off = {"ORYXOS_DISABLE_PLUGINS": "http,util"}  # they register the real ones
    shown = run(demo, "profile", "show", "weather", "--json", plugins=[plugin], env=builtins_off)
    data = json.loads(shown.output)
    assert data["resolved_tools"] == {
        "available": ["http_get"],
        "unavailable": {"current_time": "not available in this context"},
        "unknown": [],
    }


def test_every_fault_kind_is_reported_by_status_and_profile_show(demo):
    break_weather(demo.workspace)
    shown = run(demo, "profile", "show", "weather").output
    status_text = run(demo, "status").output
    for kind in FAULTS:
        assert kind in shown, kind
        assert kind in status_text, kind
    report = json.loads(run(demo, "status", "--json").output)
    states = {(f["name"], f["state"]) for f in report["agents"]["skill_faults"]}
    assert states == {
        ("etc", "escaped"),
        ("climb", "escaped"),
        ("gone", "dangling"),
        ("empty", "invalid-target"),
        ("meteo", "name-mismatch"),
        ("copied", "stale-reference"),
        ("incident-report", "stale-reference"),
    }
    data = json.loads(run(demo, "profile", "show", "weather", "--json").output)
    assert [s["name"] for s in data["skills"] if s["state"] == "ok"] == ["weather-report"]


def test_a_broken_agent_is_reported_and_the_others_listed(demo):
    broken = demo.workspace.agents_dir / "broken"
    broken.mkdir()
    (broken / "AGENT.md").write_text("---\nname: broken\nsetings: {}\n---\n")
    result = run(demo, "profile", "list")
    assert "ops-agent" in result.output and "weather" in result.output
    assert "broken/AGENT.md:3: setings: unknown key; did you mean 'settings'?" in result.output
    shown = run(demo, "profile", "show", "broken", code=2)
    assert "AGENT.md:3: setings" in shown.output and "Traceback" not in shown.output


def test_profile_create_and_delete(demo):
    out = run(
        demo,
        "profile",
        "create",
        "helpdesk",
        "--provider",
        "deepseek",
        "--model",
        "deepseek-chat",
        "--description",
        "Answers: tickets",
    ).output
    assert "created" in out
    data = json.loads(run(demo, "profile", "show", "helpdesk", "--json").output)
    assert data["description"] == "Answers: tickets"
    assert data["provider"]["name"] == "deepseek" and data["provider"]["model"] == "deepseek-chat"
    assert (demo.workspace.agents_dir / "helpdesk" / "skills").is_dir()
    assert "already exists" in run(demo, "profile", "create", "helpdesk", code=2).output
    assert "invalid agent name" in run(demo, "profile", "create", "../x", code=2).output
    run(demo, "profile", "delete", "helpdesk", code=1, input="n\n")
    assert (demo.workspace.agents_dir / "helpdesk").is_dir()
    run(demo, "profile", "delete", "helpdesk", "--yes")
    assert not (demo.workspace.agents_dir / "helpdesk").exists()
    assert "no agent 'helpdesk'" in run(demo, "profile", "delete", "helpdesk", "-y", code=2).output


def test_profile_delete_keeps_the_shared_skills(demo):
    run(demo, "profile", "delete", "ops-agent", input="y\n")
    assert (demo.workspace.skills_dir / "disk-triage" / "SKILL.md").is_file()


def test_skill_create_link_unlink(demo):
    run(demo, "skill", "create", "triage", "--description", 'Sort "urgent": tickets')
    shown = json.loads(run(demo, "skill", "show", "triage", "--json").output)
    assert shown["description"] == 'Sort "urgent": tickets'
    assert shown["linked_by"] == [] and shown["files"] == ["SKILL.md"]
    run(demo, "skill", "link", "triage", "weather")
    link = demo.workspace.agents_dir / "weather" / "skills" / "triage"
    assert link.is_symlink() and os.readlink(link) == "../../../skills/triage"
    assert "already links" in run(demo, "skill", "link", "triage", "weather").output
    data = json.loads(run(demo, "profile", "show", "weather", "--json").output)
    assert {s["name"]: s["state"] for s in data["skills"]}["triage"] == "ok"
    assert json.loads(run(demo, "skill", "show", "triage", "--json").output)["linked_by"] == [
        "weather"
    ]
    run(demo, "skill", "unlink", "triage", "weather")
    assert not os.path.lexists(link)
    assert "has no skill link" in run(demo, "skill", "unlink", "triage", "weather", code=2).output


def test_unlink_reports_a_stale_mention(demo):
    agent_md = demo.workspace.agents_dir / "weather" / "AGENT.md"
    agent_md.write_text(agent_md.read_text() + "\nFollow `weather-report`.\n")
    result = run(demo, "skill", "unlink", "weather-report", "weather")
    assert "stale-reference" in result.output and "weather-report" in result.output


def test_link_refusals(demo):
    assert "no skill 'nope'" in run(demo, "skill", "link", "nope", "weather", code=2).output
    assert "no agent 'nobody'" in run(demo, "skill", "link", "disk-triage", "nobody", code=2).output
    os.symlink("/etc", demo.workspace.agents_dir / "weather" / "skills" / "disk-triage")
    clash = run(demo, "skill", "link", "disk-triage", "weather", code=2).output
    assert "already exists (escaped" in clash
    # unlink removes a faulty link too, and then link works
    run(demo, "skill", "unlink", "disk-triage", "weather")
    run(demo, "skill", "link", "disk-triage", "weather")
    (demo.workspace.agents_dir / "weather" / "skills" / "copy").mkdir()
    assert "not a symlink" in run(demo, "skill", "unlink", "copy", "weather", code=2).output


def test_link_never_writes_through_a_symlinked_skills_folder(demo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    links = demo.workspace.agents_dir / "weather" / "skills"
    shutil.rmtree(links)
    os.symlink(elsewhere, links)
    result = run(demo, "skill", "link", "disk-triage", "weather", code=2)
    assert "must be a real folder" in result.output
    assert list(elsewhere.iterdir()) == []


def test_link_refuses_an_invalid_skill(demo):
    bad = demo.workspace.skills_dir / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\n")
    result = run(demo, "skill", "link", "bad", "weather", code=2)
    assert "folder is named 'bad'" in result.output
    assert not os.path.lexists(demo.workspace.agents_dir / "weather" / "skills" / "bad")


def test_deleting_a_linked_skill_is_refused_naming_the_agents(demo):
    run(demo, "skill", "link", "disk-triage", "weather")
    refused = run(demo, "skill", "delete", "disk-triage", "--yes", code=2)
    assert "linked by agents: ops-agent, weather" in refused.output
    assert (demo.workspace.skills_dir / "disk-triage").is_dir()
    result = run(demo, "skill", "delete", "disk-triage", "--force", "--yes")
    assert "deleted skill disk-triage" in result.output
    assert not (demo.workspace.skills_dir / "disk-triage").exists()
    for agent in ("ops-agent", "weather"):
        assert not os.path.lexists(demo.workspace.agents_dir / agent / "skills" / "disk-triage")
    report = json.loads(run(demo, "status", "--json").output)
    assert report["agents"]["skill_faults"] == []


def test_deleting_an_unlinked_skill(demo):
    run(demo, "skill", "create", "scratch")
    run(demo, "skill", "delete", "scratch", code=1, input="n\n")
    assert (demo.workspace.skills_dir / "scratch").is_dir()
    run(demo, "skill", "delete", "scratch", input="y\n")
    assert not (demo.workspace.skills_dir / "scratch").exists()
    assert "no skill 'scratch'" in run(demo, "skill", "delete", "scratch", "-y", code=2).output
