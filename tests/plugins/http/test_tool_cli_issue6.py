"""The issue-6 tools through the command line: listed by `oryxos tool list`, run by
`oryxos tool run` (the executor, sandbox and audit), memory through `oryxos memory`."""

from __future__ import annotations

import json

import yaml
from http_fakes import FakeWeb

ISSUE6_TOOLS = {
    "http_get",
    "http_post",
    "http_request",
    "fetch_webpage",
    "download_file",
    "web_search",
    "current_time",
    "json_extract",
    "save_memory",
    "recall_memory",
    "ask_user",
}


def test_tool_list_shows_every_issue6_tool_and_why_some_are_unavailable(oryxos_cli):
    listed = json.loads(oryxos_cli.invoke(["tool", "list", "--json"]).output)["tools"]
    tools = {row["name"]: row for row in listed}
    assert set(tools) >= ISSUE6_TOOLS
    text = oryxos_cli.invoke(["tool", "list"]).output
    row = next(line for line in text.splitlines() if line.startswith("web_search "))
    assert row.split(None, 3)[3] == "no: web_search_configured is false"
    row = next(line for line in text.splitlines() if line.startswith("ask_user "))
    assert row.split(None, 3)[3] == "no: is_interactive is false"


def test_tool_run_util_and_memory_tools(oryxos_cli):
    result = oryxos_cli.invoke(
        ["tool", "run", "current_time", "--input", '{"timezone": "Asia/Shanghai"}']
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["iso8601"].endswith("+08:00")
    bad = oryxos_cli.invoke(["tool", "run", "current_time", "--input", '{"timezone": "Nowhere"}'])
    assert bad.exit_code == 1 and "unknown IANA time zone 'Nowhere'" in bad.output
    result = oryxos_cli.invoke(
        ["tool", "run", "json_extract", "--input", '{"json_text": "[1,2]", "expression": "[1]"}']
    )
    assert result.exit_code == 0 and result.output.strip() == "2"
    saved = oryxos_cli.invoke(["tool", "run", "save_memory", "--input", '{"text": "Likes tea"}'])
    assert saved.exit_code == 0, saved.output
    recalled = oryxos_cli.invoke(["tool", "run", "recall_memory", "--input", '{"query": "tea"}'])
    assert recalled.output.strip().endswith("] Likes tea")
    assert oryxos_cli.invoke(["memory", "show"]).output.strip().endswith("] Likes tea")


def test_tool_run_http_tools_against_a_local_server(oryxos_cli):
    config_file = oryxos_cli.workspace.config_file
    with FakeWeb() as web:
        config = yaml.safe_load(config_file.read_text())
        config["sandbox"]["http"]["allowed_domains"] = ["127.0.0.1"]
        config["web_search"] = {"backend": "searxng", "url": f"{web.base}/searxng"}
        config_file.write_text(yaml.safe_dump(config))

        def run(tool, **arguments):
            return oryxos_cli.invoke(["tool", "run", tool, "--input", json.dumps(arguments)])

        assert run("http_get", url=f"{web.base}/json").output.startswith("HTTP 200 OK")
        assert '"method": "POST"' in run("http_post", url=f"{web.base}/echo", json={}).output
        assert (
            '"method": "PATCH"'
            in run("http_request", method="PATCH", url=f"{web.base}/echo").output
        )
        assert "Title: The Oryx of Arabia" in run("fetch_webpage", url=f"{web.base}/article").output
        saved = run("download_file", url=f"{web.base}/small-file", path="dl.txt")
        assert saved.exit_code == 0, saved.output
        assert (oryxos_cli.workspace.project_dir / "dl.txt").read_text() == "hello download\n"
        assert run("web_search", query="oryx").output.startswith("1. Arabian oryx")
        refused = run("http_get", url=f"{web.base}/redirect-away")
        assert refused.exit_code == 1 and "sandbox.http.allowed_domains" in refused.output
