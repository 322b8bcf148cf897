"""``oryxos tool list|run`` and ``oryxos sandbox list|add|remove`` on a real workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from oryxos.runtime import Runtime
from oryxos.storage import AuditQuery

FILE_AND_SHELL_TOOLS = {
    "read_file", "write_file", "edit_file", "append_file", "list_dir", "glob", "grep",
    "make_dir", "move_file", "copy_file", "delete_file", "shell",
}  # fmt: skip


def _audit(workspace) -> list:
    runtime = Runtime.load(workspace)
    try:
        return runtime.storage.audit.tool_invocations(AuditQuery(limit=100)).items
    finally:
        runtime.close()


def test_tool_list_shows_the_twelve_tools_with_groups_plugin_and_availability(oryxos_cli):
    result = oryxos_cli.invoke(["tool", "list", "--json"])
    assert result.exit_code == 0, result.output
    tools = {row["name"]: row for row in json.loads(result.output)["tools"]}
    assert set(tools) >= FILE_AND_SHELL_TOOLS
    assert tools["grep"]["groups"] == ["files", "files:read"]
    assert tools["shell"]["plugin"] == "shell" and tools["shell"]["available"] is True
    text = oryxos_cli.invoke(["tool", "list"]).output
    assert text.splitlines()[0].split() == ["NAME", "GROUPS", "PLUGIN", "AVAILABLE"]
    row = next(line for line in text.splitlines() if line.startswith("delete_file "))
    assert row.split() == ["delete_file", "files,files:write", "files", "yes"]


def test_tool_list_shows_why_a_tool_is_unavailable(oryxos_cli, oryxos_inline_plugin):
    def register(catalog, config):
        from oryxos.tools import tool

        @tool
        def ask_person() -> str:
            """Ask."""
            return ""

        catalog.register(ask_person, available="is_interactive")

    plugin = oryxos_inline_plugin("asker", oryxos_register_tools=register)
    result = oryxos_cli.invoke(["tool", "list"], plugins=[plugin])
    line = next(line for line in result.output.splitlines() if line.startswith("ask_person"))
    assert line.split(None, 3)[3] == "no: is_interactive is false"


def test_tool_run_outside_path_is_refused_with_the_rule_and_audited(oryxos_cli):
    result = oryxos_cli.invoke(
        ["tool", "run", "read_file", "--input", '{"path": "../../etc/passwd"}']
    )
    assert result.exit_code == 1
    assert "refused by sandbox rule sandbox.file.allowed_paths" in result.output
    (row,) = _audit(oryxos_cli.workspace)
    assert (row.tool_name, row.success, row.channel) == ("read_file", False, "cli")
    assert row.input == {"path": "../../etc/passwd"}


def test_tool_run_prints_the_result_and_json(oryxos_cli):
    (oryxos_cli.workspace.project_dir / "hello.txt").write_text("hi there\n")
    plain = oryxos_cli.invoke(["tool", "run", "read_file", "--input", '{"path": "hello.txt"}'])
    assert plain.exit_code == 0 and plain.output == "hi there\n\n"
    as_json = oryxos_cli.invoke(
        ["tool", "run", "read_file", "--input", '{"path": "hello.txt"}', "--json"]
    )
    assert json.loads(as_json.output) == {
        "success": True, "content": "hi there\n", "error_message": None, "retryable": False,
    }  # fmt: skip
    failed = oryxos_cli.invoke(["tool", "run", "read_file", "--input", '{"path": "no"}', "--json"])
    assert failed.exit_code == 1 and json.loads(failed.output)["retryable"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tool", "run", "read_file", "--input", "{nope"], "--input is not valid JSON"),
        (["tool", "run", "read_file", "--input", "[1]"], "--input must be a JSON object"),
        (["tool", "run", "no_such_tool"], "unknown tool 'no_such_tool'"),
        (["tool", "run", "read_file", "--agent", "x"], "--agent needs the agent loader"),
        (["sandbox", "add", "http", "http://x.com/a"], "not a host or *.domain entry"),
        (["sandbox", "add", "http", "*.10.0.0.1"], "wildcard cannot apply to an IP"),
        (["sandbox", "add", "shell", "env"], "runs other programs"),
        (["sandbox", "add", "shell", "'unclosed"], "cannot read the command entry"),
        (["sandbox", "add", "dns", "x"], "'dns' is not one of 'file', 'shell', 'http'"),
        (["sandbox", "remove", "file", "/nowhere"], "has no '/nowhere'"),
    ],
)
def test_usage_errors_exit_2(oryxos_cli, monkeypatch, args, message):
    monkeypatch.setattr(Runtime, "agents", None, raising=False)  # as if no agent loader
    result = oryxos_cli.invoke(args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_tool_run_as_an_agent_limits_the_tools(oryxos_cli, monkeypatch, tmp_path):
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("skill text\n")
    profile = SimpleNamespace(
        name="reader", wanted_tools=lambda: ["@files:read"], readable_roots=(skill,)
    )
    loader = SimpleNamespace(load=lambda name: profile)
    monkeypatch.setattr(Runtime, "agents", loader, raising=False)
    listed = json.loads(oryxos_cli.invoke(["tool", "list", "--agent", "reader", "--json"]).output)
    assert [t["name"] for t in listed["tools"]] == ["glob", "grep", "list_dir", "read_file"]
    read = oryxos_cli.invoke(
        [
            "tool",
            "run",
            "read_file",
            "--agent",
            "reader",
            "--input",
            json.dumps({"path": str(skill / "SKILL.md")}),
        ]
    )
    assert read.exit_code == 0 and read.output == "skill text\n\n"
    write = oryxos_cli.invoke(
        [
            "tool",
            "run",
            "write_file",
            "--agent",
            "reader",
            "--input",
            '{"path": "a", "content": ""}',
        ]
    )
    assert write.exit_code == 2 and "agent reader has no tool 'write_file'" in write.output
    (row,) = _audit(oryxos_cli.workspace)
    assert row.agent == "reader"


def test_sandbox_add_list_remove(oryxos_cli, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")  # not under the workspace's project dir
    (outside / "x.txt").write_text("x\n")
    read = ["tool", "run", "read_file", "--input", json.dumps({"path": str(outside / "x.txt")})]
    assert oryxos_cli.invoke(read).exit_code == 1
    added = oryxos_cli.invoke(["sandbox", "add", "file", str(outside), "--note", "reports"])
    assert added.exit_code == 0, added.output
    assert oryxos_cli.invoke(["sandbox", "add", "file", str(outside)]).exit_code == 2  # duplicate
    assert oryxos_cli.invoke(read).exit_code == 0
    listed = json.loads(oryxos_cli.invoke(["sandbox", "list", "--json"]).output)
    assert {"kind": "file", "value": str(outside), "source": "runtime", "note": "reports"} in listed
    assert listed[0]["source"] == "workspace"
    assert oryxos_cli.invoke(["sandbox", "remove", "file", str(outside)]).exit_code == 0
    assert oryxos_cli.invoke(read).exit_code == 1


def test_a_whitelist_change_in_another_process_applies_without_restart(oryxos_workspace, tmp_path):
    """A running runtime sees `oryxos sandbox add` run by a real, separate process."""
    runtime = Runtime.load(oryxos_workspace)
    try:
        url = "https://api.example.org/v1"
        with pytest.raises(Exception, match=r"sandbox\.http\.allowed_domains"):
            runtime.sandbox.check_url(url)
        env = {**os.environ, "ORYXOS_WORKSPACE": str(oryxos_workspace.path)}
        oryxos = Path(sys.executable).with_name("oryxos")
        done = subprocess.run(
            [str(oryxos), "sandbox", "add", "http", "api.example.org"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert runtime.sandbox.check_url(url).host == "api.example.org"
    finally:
        runtime.close()


# other plugins' tools join as their sections land
DOCUMENTED_PLUGINS = ("files", "shell", "http", "util", "memory", "interaction")


def test_every_built_in_tool_has_a_section_in_docs_tools_md(oryxos_runtime):
    docs = (Path(__file__).parents[1] / "docs" / "tools.md").read_text().splitlines()
    tools = [e for e in oryxos_runtime.catalog.entries() if e.plugin in DOCUMENTED_PLUGINS]
    assert len(tools) == 12 + 11  # files and shell; http, util, memory and interaction
    for entry in tools:
        assert f"### {entry.name}" in docs, entry.name
        start = docs.index(f"### {entry.name}")
        section = " ".join(docs[start : start + 12])
        assert "**Sandbox:**" in section, entry.name


def test_tool_list_and_run_as_the_default_agent(oryxos_cli):
    listed = oryxos_cli.invoke(["tool", "list", "--agent", "default", "--json"])
    assert listed.exit_code == 0, listed.output
    names = [tool["name"] for tool in json.loads(listed.output)["tools"]]
    assert {"read_file", "list_dir", "glob", "grep"} <= set(names)
    assert "shell" not in names and "write_file" not in names
    refused = oryxos_cli.invoke(
        ["tool", "run", "shell", "--agent", "default", "--input", '{"command": "ls"}']
    )
    assert refused.exit_code == 2 and "agent default has no tool 'shell'" in refused.output
    missing = oryxos_cli.invoke(["tool", "list", "--agent", "nobody"])
    assert missing.exit_code == 2 and "no agent 'nobody'" in missing.output


def test_file_and_shell_tool_schemas_stay_small(oryxos_runtime):
    """Every byte is sent with every request; 3,251 DeepSeek tokens (over the 3,000 budget) came
    from longer schemas. 4,000 bytes of JSON for the twelve keeps them near 2,700."""
    ctx = oryxos_runtime.catalog.context()
    tools = [
        oryxos_runtime.catalog.build(e.name, ctx)
        for e in oryxos_runtime.catalog.entries()
        if e.plugin in ("files", "shell")
    ]
    size = sum(len(json.dumps(t.function_schema())) for t in tools)
    assert size <= 4000, size
