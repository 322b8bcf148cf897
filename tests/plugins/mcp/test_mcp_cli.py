"""``oryxos mcp list|tools`` on a real workspace with real servers."""

from __future__ import annotations

import json

import pytest
from mcp_helpers import children, fake, npm_server, py_server

pytestmark = pytest.mark.slow


@pytest.fixture
def configured(write_servers, fast_timeouts):
    fast_timeouts(start=15)
    write_servers(
        f"""
        servers:
          - name: time
            command: {py_server("mcp-server-time")}
          - name: everything
            command: {npm_server("mcp-server-everything")}
          - name: broken
            command: {fake("exit")}
          - name: remote
            transport: http
            url: https://example.invalid/mcp
        """
    )


def test_mcp_list_json_shows_state_and_tool_count(oryxos_cli, configured):
    before = set(children())
    result = oryxos_cli.invoke(["mcp", "list", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = {row["name"]: row for row in report["servers"]}
    assert rows["time"]["state"] == "running" and rows["time"]["tools"] == 2
    assert rows["everything"]["state"] == "running" and rows["everything"]["tools"] >= 10
    assert rows["broken"]["state"] == "failed" and "giving up at start" in rows["broken"]["error"]
    assert rows["remote"]["state"] == "skipped" and rows["remote"]["transport"] == "http"
    assert report["file"].endswith("mcp_servers.yaml")
    # the command stopped what it started
    left = {pid: cmd for pid, cmd in children().items() if pid not in before}
    assert not [cmd for cmd in left.values() if "mcp-server" in cmd or "fake_server" in cmd]


def test_mcp_list_prints_a_table(oryxos_cli, configured):
    result = oryxos_cli.invoke(["mcp", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TRANSPORT", "STATE", "TOOLS", "DETAIL"]
    assert any(line.split()[:4] == ["time", "stdio", "running", "2"] for line in lines)
    assert any(line.startswith("remote") and "skipped" in line for line in lines)


def test_mcp_list_with_no_servers(oryxos_cli):
    result = oryxos_cli.invoke(["mcp", "list"])
    assert result.exit_code == 0
    assert "no MCP servers configured" in result.stdout


def test_mcp_tools_lists_one_servers_tools(oryxos_cli, configured):
    result = oryxos_cli.invoke(["mcp", "tools", "time"])
    assert result.exit_code == 0, result.output
    assert "get_current_time" in result.stdout and "convert_time" in result.stdout

    as_json = json.loads(oryxos_cli.invoke(["mcp", "tools", "time", "--json"]).stdout)
    names = [tool["name"] for tool in as_json["tools"]]
    assert sorted(names) == ["convert_time", "get_current_time"]
    assert as_json["tools"][0]["input_schema"]["type"] == "object"


def test_mcp_tools_errors_name_the_server(oryxos_cli, configured):
    unknown = oryxos_cli.invoke(["mcp", "tools", "nope"])
    assert unknown.exit_code == 2
    assert "no MCP server 'nope'" in unknown.stderr and "known: broken, everything, time" in (
        unknown.stderr
    )

    skipped = oryxos_cli.invoke(["mcp", "tools", "remote"])
    assert skipped.exit_code == 2 and "skipped: transport http" in skipped.stderr

    failed = oryxos_cli.invoke(["mcp", "tools", "broken"])
    assert failed.exit_code == 1
    assert "MCP server 'broken' could not start" in failed.stderr


def test_a_bad_servers_file_is_a_usage_error_naming_the_line(oryxos_cli, write_servers):
    write_servers("servers:\n  - name: x\n    comand: y\n")
    result = oryxos_cli.invoke(["mcp", "list"])
    assert result.exit_code == 2
    assert "mcp_servers.yaml:3: servers[0] (x).comand: unknown key; did you mean 'command'?" in (
        result.stderr
    )


def test_mcp_help_does_not_import_the_sdk(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\nfrom oryxos.cli import main\ntry:\n    main(['mcp', '--help'])\n"
        "except SystemExit:\n    pass\nprint('MCP_IMPORTED', 'mcp' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout
    assert "list" in out and "tools" in out
    assert "MCP_IMPORTED False" in out


def test_oryxos_tool_run_calls_an_mcp_tool_through_the_executor(oryxos_cli, write_servers):
    """`oryxos tool run` on an MCP tool: schema check, audit row, and no process left behind."""
    from oryxos.runtime import Runtime
    from oryxos.storage import AuditQuery

    write_servers(f"servers:\n  - name: ev\n    command: {npm_server('mcp-server-everything')}\n")
    before = set(children())
    ok = oryxos_cli.invoke(["tool", "run", "echo", "--input", '{"message": "hi"}'])
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.strip() == "Echo: hi"

    bad = oryxos_cli.invoke(["tool", "run", "echo", "--input", '{"message": 5}'])
    assert bad.exit_code == 1 and "message" in bad.stderr  # jsonschema, before the server

    listed = json.loads(oryxos_cli.invoke(["tool", "list", "--json"]).stdout)
    echo = next(row for row in listed["tools"] if row["name"] == "echo")
    assert echo["groups"] == ["mcp:ev"] and echo["plugin"].startswith("MCP server 'ev'")

    left = {pid: cmd for pid, cmd in children().items() if pid not in before}
    assert not [cmd for cmd in left.values() if "mcp-server" in cmd]
    with Runtime.load(oryxos_cli.workspace) as runtime:
        rows = runtime.storage.audit.tool_invocations(AuditQuery(tool_name="echo")).items
    assert sorted(row.success for row in rows) == [False, True]


def test_status_lists_the_servers_without_starting_one(oryxos_cli, configured):
    before = set(children())
    result = oryxos_cli.invoke(["status", "--json"])
    assert result.exit_code == 0, result.output
    (section,) = [s for s in json.loads(result.stdout)["sections"] if s["name"] == "mcp"]
    states = {item["name"]: item["state"] for item in section["items"]}
    assert states == {
        "time": "not started",
        "everything": "not started",
        "broken": "not started",
        "remote": "skipped",
    }
    assert section["ok"] is True and "they start with the tool catalog" in section["summary"]
    started = {pid: cmd for pid, cmd in children().items() if pid not in before}
    assert not [cmd for cmd in started.values() if "mcp-server" in cmd or "fake_server" in cmd]
    text = oryxos_cli.invoke(["status"]).stdout
    assert "mcp        4 server(s) in" in text
    assert "remote: skipped, transport http" in text


def test_the_api_and_the_console_show_each_running_servers_state(configured, make_runtime):
    from oryxos_web import create_app

    runtime = make_runtime()
    assert "get_current_time" in runtime.catalog  # building the catalog starts the servers
    client = create_app(runtime).test_client()
    (section,) = [s for s in client.get("/api/v1/info").get_json()["status"] if s["name"] == "mcp"]
    assert section["ok"] is False and "1 failed" in section["summary"]
    rows = {item["name"]: item for item in section["items"]}
    assert rows["time"]["state"] == "running" and rows["time"]["tools"] == 2
    assert rows["broken"]["state"] == "failed" and "giving up at start" in rows["broken"]["error"]
    html = client.get("/").get_data(as_text=True)
    assert 'id="status-mcp"' in html and "giving up at start" in html
