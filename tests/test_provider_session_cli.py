"""``oryxos provider list`` and ``oryxos session list|show|archive``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from oryxos.testing import Reply, use_model_server


def test_provider_list_shows_models_and_whether_keys_are_set_never_the_key(
    oryxos_cli, oryxos_workspace, oryxos_model_server, monkeypatch
):
    use_model_server(oryxos_workspace, oryxos_model_server)
    path = oryxos_workspace.config_file
    data = yaml.safe_load(path.read_text())
    data["providers"]["deepseek"] = {
        "model": "deepseek/deepseek-chat",
        "api_key": "${ORYXOS_T_DS_KEY}",
    }
    data["providers"]["openai"] = {"model": "openai/gpt-4o-mini", "api_key": "${ORYXOS_T_OA_KEY}"}
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("ORYXOS_T_DS_KEY", "sk-very-secret-value")
    monkeypatch.delenv("ORYXOS_T_OA_KEY", raising=False)
    result = oryxos_cli.invoke(["provider", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)["providers"]}
    assert rows["deepseek"]["key"] == "${ORYXOS_T_DS_KEY}" and rows["deepseek"]["key_set"]
    assert rows["openai"]["key_set"] is False
    assert rows["default"]["api_base"] == oryxos_model_server.url and rows["default"]["default"]
    assert all(row["plugin"] == "litellm" for row in rows.values())
    text = oryxos_cli.invoke(["provider", "list"]).output
    assert "deepseek/deepseek-chat" in text and "NOT SET" in text and "default *" in text
    assert "sk-very-secret-value" not in result.output + text


def test_provider_list_without_providers(oryxos_cli):
    result = oryxos_cli.invoke(["provider", "list"])
    assert result.exit_code == 0 and "no providers configured" in result.output


def test_session_list_show_and_archive(oryxos_cli, oryxos_workspace, oryxos_model_server):
    use_model_server(oryxos_workspace, oryxos_model_server)
    (oryxos_workspace.agents_dir / "tester").mkdir()
    (oryxos_workspace.agents_dir / "tester" / "AGENT.md").write_text(
        "---\nname: tester\nprovider:\n  name: default\n---\nTest agent.\n"
    )
    oryxos_model_server.script(Reply.answer("hello there"))
    assert oryxos_cli.invoke(["chat", "-p", "tester", "-m", "hi"]).exit_code == 0
    listed = json.loads(oryxos_cli.invoke(["session", "list", "--json"]).output)
    assert listed["total"] == 1
    (row,) = listed["sessions"]
    assert row["session_id"] == "cli:local:tester" and row["message_count"] == 2
    assert "cli:local:tester" in oryxos_cli.invoke(["session", "list"]).output
    shown = oryxos_cli.invoke(["session", "show", "cli:local:tester"])
    assert shown.exit_code == 0 and "user: hi" in shown.output
    assert "assistant: hello there" in shown.output
    as_json = json.loads(
        oryxos_cli.invoke(["session", "show", "cli:local:tester", "--json"]).output
    )
    assert as_json["messages"][-1] == {"role": "assistant", "content": "hello there"}
    assert oryxos_cli.invoke(["session", "archive", "cli:local:tester"]).exit_code == 0
    archived = json.loads(
        oryxos_cli.invoke(["session", "list", "--status", "archived", "--json"]).output
    )
    assert archived["total"] == 1


def test_session_show_unknown_is_a_clear_error(oryxos_cli):
    result = oryxos_cli.invoke(["session", "show", "nope"])
    assert result.exit_code == 2 and "no session 'nope'" in result.output


@pytest.mark.parametrize("args", [["provider", "list"], ["session", "list"], ["chat", "--help"]])
def test_listing_commands_do_not_import_litellm(oryxos_workspace, oryxos_model_server, args):
    use_model_server(oryxos_workspace, oryxos_model_server)
    code = (
        "import sys\n"
        "from oryxos.cli import main\n"
        "try:\n"
        f"    main(['-w', {str(oryxos_workspace.path)!r}, *{args!r}])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "print('LITELLM', 'litellm' in sys.modules, 'openai' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "LITELLM False False"
