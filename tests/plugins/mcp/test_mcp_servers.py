"""The MCP plugin against real third-party servers (installed by .ci/setup-mcp.sh).

PyPI: mcp-server-time, mcp-server-git. npm: @modelcontextprotocol/server-everything and
@modelcontextprotocol/server-filesystem. The stdlib fake server covers what real ones do not do
on demand (never answering, exiting at start, starting slowly).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from mcp_helpers import alive, children, fake, npm_server, py_server
from oryxos_mcp.manager import manager_for

from oryxos.errors import StartupError

pytestmark = pytest.mark.slow


def _call(runtime, name, arguments, agent=None):
    ctx = runtime.catalog.context(agent=agent, runtime=runtime, config=runtime.config)
    return runtime.catalog.build(name, ctx).execute(arguments, ctx)


def _pid_of(runtime, needle: str) -> int:
    matches = [pid for pid, cmd in children().items() if needle in cmd]
    assert matches, f"no child process running {needle!r}: {children()}"
    return matches[0]


@pytest.fixture
def four_servers(write_servers, fast_timeouts, disable_plugins, tmp_path):
    data = tmp_path / "shared"
    data.mkdir()
    (data / "note.txt").write_text("hello from the filesystem server\n")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    fast_timeouts(start=20, call=15)
    # the Filesystem server's read_file/write_file clash with the built-in file tools (below)
    disable_plugins("files")
    write_servers(
        f"""
        servers:
          - name: time
            command: {py_server("mcp-server-time")} --local-timezone UTC
          - name: git
            command: {py_server("mcp-server-git")} --repository {repo}
          - name: everything
            command: {npm_server("mcp-server-everything")}
          - name: fs
            command: {npm_server("mcp-server-filesystem")} {data}
        """
    )
    return data


def test_tools_of_every_server_join_the_catalog_in_their_group(four_servers, make_runtime):
    runtime = make_runtime()
    catalog = runtime.catalog
    groups = catalog.groups()
    assert {"get_current_time", "convert_time"} == set(groups["mcp:time"])
    assert "git_status" in groups["mcp:git"]
    assert "echo" in groups["mcp:everything"]
    assert "list_allowed_directories" in groups["mcp:fs"]
    # declared name, description and input schema, as the server listed them
    entry = catalog.get("get_current_time")
    tool = catalog.build("get_current_time", catalog.context())
    assert entry.plugin.startswith("MCP server 'time'")
    assert "time" in tool.description.lower()
    assert tool.input_schema["required"] == ["timezone"]
    # what an agent that lists `mcp_servers: [time]` asks for (Profile.wanted_tools())
    selection = catalog.select(["@mcp:time"], catalog.context())
    assert selection.names == ["convert_time", "get_current_time"]


def test_calls_return_text_and_structured_content(four_servers, make_runtime):
    runtime = make_runtime()
    result = _call(runtime, "get_current_time", {"timezone": "Europe/Paris"})
    assert result.success, result
    assert json.loads(result.content)["timezone"] == "Europe/Paris"

    echoed = _call(runtime, "echo", {"message": "héllo"})
    assert echoed.success and echoed.content == "Echo: héllo"

    listing = _call(runtime, "list_allowed_directories", {})
    assert str(four_servers.resolve()) in listing.content

    note = _call(runtime, "read_text_file", {"path": str(four_servers / "note.txt")})
    assert note.content.strip() == "hello from the filesystem server"

    status = _call(runtime, "git_status", {"repo_path": str(four_servers.parent / "repo")})
    assert status.success and "branch" in status.content.lower()


def test_a_tool_error_is_a_failed_retryable_result(four_servers, make_runtime):
    runtime = make_runtime()
    result = _call(runtime, "get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert not result.success and result.retryable
    assert "Mars/Olympus_Mons" in result.error_message
    # a protocol-level error (unknown arguments for the server) is retryable too
    outside = _call(runtime, "read_text_file", {"path": "/etc/passwd"})
    assert not outside.success and outside.retryable
    assert "denied" in outside.error_message.lower() or "outside" in outside.error_message


def test_env_is_expanded_for_the_server_and_nothing_else_is_inherited(
    write_servers, fast_timeouts, make_runtime, monkeypatch
):
    monkeypatch.setenv("ORYX_TEST_GREETING", "bonjour-from-env")
    monkeypatch.setenv("ORYX_NOT_PASSED", "must-not-leak")
    fast_timeouts()
    write_servers(
        f"""
        servers:
          - name: everything
            command: {npm_server("mcp-server-everything")}
            env:
              GREETING: ${{ORYX_TEST_GREETING}}
              LITERAL: plain value
        """
    )
    result = _call(make_runtime(), "get-env", {})
    assert result.success
    env = json.loads(result.content)
    assert env["GREETING"] == "bonjour-from-env"
    assert env["LITERAL"] == "plain value"
    assert "ORYX_NOT_PASSED" not in env and "PATH" in env


def test_a_missing_env_variable_stops_only_that_server(
    write_servers, fast_timeouts, make_runtime, monkeypatch
):
    monkeypatch.delenv("ORYX_TEST_ABSENT", raising=False)
    fast_timeouts()
    write_servers(
        f"""
        servers:
          - name: time
            command: {py_server("mcp-server-time")}
          - name: needs-token
            command: {npm_server("mcp-server-everything")}
            env:
              API_TOKEN: ${{ORYX_TEST_ABSENT}}
        """
    )
    runtime = make_runtime()
    assert "get_current_time" in runtime.catalog and "echo" not in runtime.catalog
    server = manager_for(runtime.config).servers["needs-token"]
    assert server.state == "failed"
    assert server.error.endswith(
        "mcp_servers.yaml:8: servers[1] (needs-token).env.API_TOKEN: "
        "environment variable ORYX_TEST_ABSENT is not set"
    )


def test_a_server_that_exits_at_start_is_reported_and_the_others_work(
    write_servers, fast_timeouts, make_runtime, caplog
):
    caplog.set_level(logging.INFO, logger="oryxos.mcp.server.broken")
    fast_timeouts(start=10)
    write_servers(
        f"""
        servers:
          - name: time
            command: {py_server("mcp-server-time")}
          - name: broken
            command: {fake("exit")}
          - name: missing
            command: /nonexistent/mcp-server
        """
    )
    began = time.monotonic()
    runtime = make_runtime()
    assert "get_current_time" in runtime.catalog
    assert time.monotonic() - began < 8  # legacy mode: no 10 s discover probe
    servers = manager_for(runtime.config).servers
    assert servers["broken"].state == "failed"
    assert "closed the connection" in servers["broken"].error
    assert "giving up at start" in servers["broken"].error  # its stderr, in the message
    assert "program not found: /nonexistent/mcp-server" in servers["missing"].error
    # the server's stderr went to the log, one record per line, on its own logger
    records = [r for r in caplog.records if r.name == "oryxos.mcp.server.broken"]
    assert any("giving up at start" in r.getMessage() for r in records)


def test_log_messages_a_server_sends_go_to_its_logger_at_their_level(
    write_servers, fast_timeouts, make_runtime, caplog
):
    fast_timeouts()
    write_servers(f"servers:\n  - name: chatty\n    command: {fake('log-on-call')}\n")
    runtime = make_runtime()
    caplog.set_level(logging.INFO, logger="oryxos.mcp.server.chatty")
    assert _call(runtime, "chatty", {}).success
    records = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.name == "oryxos.mcp.server.chatty"
    ]
    assert ("INFO", "[chatty/fake] warming up") in records
    assert ("ERROR", '[chatty/fake] {"disk": "full"}') in records


def test_a_server_killed_mid_session_gives_a_retryable_error_then_restarts(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(backoff=30)
    write_servers(f"servers:\n  - name: time\n    command: {py_server('mcp-server-time')}\n")
    runtime = make_runtime()
    assert _call(runtime, "get_current_time", {"timezone": "UTC"}).success
    pid = _pid_of(runtime, "mcp-server-time")
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)

    failed = _call(runtime, "get_current_time", {"timezone": "UTC"})
    assert not failed.success and failed.retryable
    assert "MCP server 'time' failed" in failed.error_message
    assert "restarted on the next call" in failed.error_message

    again = _call(runtime, "get_current_time", {"timezone": "UTC"})  # first restart: at once
    assert again.success, again
    server = manager_for(runtime.config).servers["time"]
    assert server.restarts == 1 and server.state == "running"
    assert _pid_of(runtime, "mcp-server-time") != pid


def test_a_server_that_keeps_failing_is_restarted_with_backoff(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(backoff=30)
    write_servers(f"servers:\n  - name: broken\n    command: {fake('exit')}\n")
    runtime = make_runtime()
    assert runtime.catalog.groups().get("mcp:broken") is None
    server = manager_for(runtime.config).servers["broken"]
    assert server.state == "failed"
    first = server.call("any_tool", {})  # first restart after a failure: at once (fails again)
    assert first.server_down and "could not start" in first.error
    second = server.call("any_tool", {})  # second restart in a row: at once, fails again
    assert "could not start" in second.error
    began = time.monotonic()
    third = server.call("any_tool", {})  # now it waits: the error says so, without trying
    assert time.monotonic() - began < 0.5
    assert third.server_down and "next restart attempt in 30 s" in third.error
    assert server.restarts == 0


def test_a_server_that_never_answers_times_out_at_start_without_hanging(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(start=1.5)
    write_servers(
        f"""
        servers:
          - name: silent
            command: {fake("silent")}
          - name: time
            command: {py_server("mcp-server-time")}
        """
    )
    began = time.monotonic()
    runtime = make_runtime()
    catalog = runtime.catalog
    assert time.monotonic() - began < 4
    assert "get_current_time" in catalog
    server = manager_for(runtime.config).servers["silent"]
    assert server.state == "failed" and server.error == "no answer within 1.5 s at start"


def test_a_call_that_gets_no_answer_times_out_and_the_server_is_restarted(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(call=1)
    write_servers(f"servers:\n  - name: hang\n    command: {fake('hang-on-call')}\n")
    runtime = make_runtime()
    assert "hang" in runtime.catalog
    pid_before = _pid_of(runtime, "hang-on-call")
    began = time.monotonic()
    result = _call(runtime, "hang", {})
    assert time.monotonic() - began < 1 + 2.5  # the call timeout plus the outer grace at most
    assert not result.success and result.retryable
    assert "no answer within 1 s" in result.error_message
    server = manager_for(runtime.config).servers["hang"]
    assert server.state == "down"
    # stopped at once, not with the next call: the shared loop's helper drives the shutdown
    deadline = time.monotonic() + 8
    while alive(pid_before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid_before), "the unresponsive server process was not stopped"
    _call(runtime, "hang", {})  # restarted, then times out again
    assert server.restarts == 1


def test_closing_the_runtime_during_a_call_ends_the_call_with_an_error_not_an_exception(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(call=30)
    write_servers(f"servers:\n  - name: hang\n    command: {fake('hang-on-call')}\n")
    runtime = make_runtime()
    outcome: dict = {}

    def call() -> None:
        try:
            outcome["result"] = _call(runtime, "hang", {})
        except BaseException as err:  # the test fails on any exception
            outcome["raised"] = err

    thread = threading.Thread(target=call)
    thread.start()
    time.sleep(0.5)  # the call is waiting for an answer that never comes
    began = time.monotonic()
    runtime.close()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - began < 10
    assert "raised" not in outcome, outcome
    result = outcome["result"]
    assert not result.success and result.retryable
    assert result.error_message == "MCP server 'hang': the call ended because OryxOS is stopping"


def test_a_long_running_real_tool_past_the_timeout_does_not_hang(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts(call=1)
    write_servers(f"servers:\n  - name: ev\n    command: {npm_server('mcp-server-everything')}\n")
    runtime = make_runtime()
    began = time.monotonic()
    result = _call(runtime, "trigger-long-running-operation", {"duration": 30, "steps": 3})
    assert time.monotonic() - began < 3.5
    assert not result.success and result.retryable


def test_a_slow_call_does_not_hold_up_calls_from_other_threads(four_servers, make_runtime):
    """One thread waits on a 2 s tool while another calls two servers: no call waits for it."""
    runtime = make_runtime()
    slow: dict = {}

    def long_call() -> None:
        slow["result"] = _call(
            runtime, "trigger-long-running-operation", {"duration": 2, "steps": 2}
        )

    thread = threading.Thread(target=long_call)
    thread.start()
    time.sleep(0.3)  # the long call is under way
    for i in range(10):
        assert _call(runtime, "echo", {"message": f"m{i}"}).content == f"Echo: m{i}"
        assert _call(runtime, "get_current_time", {"timezone": "UTC"}).success
    assert "result" not in slow, "the quick calls waited for the slow one"
    thread.join(15)
    assert slow["result"].success, slow["result"]


def test_servers_start_in_parallel(write_servers, fast_timeouts, make_runtime):
    fast_timeouts(start=10)
    write_servers(
        f"""
        servers:
          - name: slow1
            command: {fake("slow", "1.5")}
          - name: slow2
            command: {fake("slow", "1.5")}
          - name: slow3
            command: {fake("slow", "1.5")}
        """
    )
    runtime = make_runtime()
    assert len(runtime.catalog.groups()) >= 3
    manager = manager_for(runtime.config)
    assert all(s.state == "running" for s in manager.servers.values())
    assert manager.start_seconds < 3.5  # one after the other would take 4.5 s and more


def test_a_name_clash_with_another_plugin_names_both_sources(
    write_servers, fast_timeouts, make_runtime, oryxos_inline_plugin
):
    fast_timeouts()
    write_servers(f"servers:\n  - name: time\n    command: {py_server('mcp-server-time')}\n")

    def get_current_time(timezone: str) -> str:
        """A built-in-looking tool with the same name."""
        return "local"

    plugin = oryxos_inline_plugin(
        "clocks", oryxos_register_tools=lambda catalog: catalog.register(get_current_time)
    )
    before = set(children())
    runtime = make_runtime(plugins=[plugin])
    with pytest.raises(StartupError) as info:
        runtime.catalog
    message = str(info.value)
    assert "tool 'get_current_time' is registered twice" in message
    assert "clocks" in message and "MCP server 'time'" in message
    assert "mcp_servers.yaml" in message
    started = set(children()) - before
    runtime.close()  # what the CLI does on the error: the servers stop, none is left behind
    _wait_gone(started)


def test_the_filesystem_server_clashes_with_the_built_in_file_tools(
    write_servers, fast_timeouts, make_runtime, tmp_path
):
    """The documented real-world clash: both sources are named, and the error says where."""
    fast_timeouts()
    write_servers(
        f"servers:\n  - name: fs\n    command: {npm_server('mcp-server-filesystem')} {tmp_path}\n"
    )
    runtime = make_runtime()
    with pytest.raises(StartupError) as info:
        runtime.catalog
    message = str(info.value)
    assert "is registered twice" in message
    assert "files" in message and "MCP server 'fs'" in message


def test_two_servers_offering_the_same_tool_name_clash(write_servers, fast_timeouts, make_runtime):
    fast_timeouts()
    write_servers(
        f"""
        servers:
          - name: clock-a
            command: {py_server("mcp-server-time")}
          - name: clock-b
            command: {py_server("mcp-server-time")}
        """
    )
    runtime = make_runtime()
    with pytest.raises(StartupError) as info:
        runtime.catalog
    assert "MCP server 'clock-a'" in str(info.value) and "MCP server 'clock-b'" in str(info.value)


def _wait_gone(pids, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if alive(pid)]
    assert not left, f"server processes left running: {left}"


def test_closing_the_runtime_stops_every_server_process(four_servers, make_runtime):
    before = set(children())
    runtime = make_runtime()
    assert _call(runtime, "echo", {"message": "x"}).success
    started = set(children()) - before
    assert len(started) >= 4, children()
    runtime.close()
    _wait_gone(started)
    assert manager_for(runtime.config).servers == {} or True  # a new manager would be made


def test_no_orphans_when_the_process_exits_without_closing(four_servers, oryxos_workspace):
    """A process that builds the catalog and exits without close(): atexit stops the servers."""
    script = textwrap.dedent(
        f"""
        import os, sys
        from oryxos.runtime import Runtime
        from oryxos.workspace import Workspace
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        from mcp_helpers import children
        runtime = Runtime.load(Workspace({str(oryxos_workspace.path)!r}))
        assert "echo" in runtime.catalog
        print("PIDS", " ".join(str(p) for p in children()), flush=True)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("PIDS"))
    pids = {int(p) for p in line.split()[1:]}
    assert len(pids) >= 4
    _wait_gone(pids, seconds=3)  # already gone when the process has exited


def test_the_zero_code_path_an_agent_md_naming_a_server_gets_its_tools(
    write_servers, fast_timeouts, make_runtime, oryxos_workspace
):
    """mcp_servers.yaml + `mcp_servers: [time]` in AGENT.md → the agent's prompt has the tools."""
    from oryxos.prompt import PromptBuilder

    fast_timeouts()
    write_servers(
        f"""
        servers:
          - name: time
            command: {py_server("mcp-server-time")}
          - name: everything
            command: {npm_server("mcp-server-everything")}
        """
    )
    agent_dir = oryxos_workspace.agents_dir / "clock"
    agent_dir.mkdir()
    (agent_dir / "AGENT.md").write_text(
        "---\nname: clock\ndescription: tells the time\nmcp_servers: [time]\ntools: [echo]\n---\n"
        "Answer with the current time.\n"
    )
    runtime = make_runtime()
    profile = runtime.agents.load("clock")
    assert profile.wanted_tools() == ["echo", "@mcp:time"]
    ctx = runtime.catalog.context(agent="clock", runtime=runtime, config=runtime.config)
    tools = runtime.catalog.build_tools(profile.wanted_tools(), ctx)
    # the server's tools, plus one tool of another server named on its own; nothing else
    assert sorted(t.name for t in tools) == ["convert_time", "echo", "get_current_time"]
    prompt = PromptBuilder(runtime).build(profile, [], tools)
    names = [schema["function"]["name"] for schema in prompt.tools]
    assert names == ["convert_time", "echo", "get_current_time"]
    by_name = {t.name: t for t in tools}
    result = by_name["get_current_time"].execute({"timezone": "Asia/Shanghai"}, ctx)
    assert result.success and "Asia/Shanghai" in result.content


def test_a_call_after_close_does_not_start_the_server_again(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts()
    write_servers(f"servers:\n  - name: time\n    command: {py_server('mcp-server-time')}\n")
    runtime = make_runtime()
    tool = runtime.catalog.build("get_current_time", runtime.catalog.context())
    before = set(children())
    runtime.close()
    result = tool.execute({"timezone": "UTC"}, runtime.catalog.context())
    assert not result.success and "is stopped" in result.error_message
    assert not [c for p, c in children().items() if p not in before and "mcp-server" in c]
