"""The CLI root, init and status on a real temporary workspace."""

from __future__ import annotations

import json

from oryxos.testing import make_workspace


def test_init_creates_the_design_workspace(oryxos_cli):
    root = oryxos_cli.workspace.path
    for relative in (
        "config.yaml",
        "agents/default/AGENT.md",
        "AGENTS.md",
        "SOUL.md",
        "USER.md",
        "memory/MEMORY.md",
        "mcp_servers.yaml",
    ):
        assert (root / relative).is_file(), relative
    assert (root / "skills").is_dir()
    assert (root / "memory/MEMORY.md").read_text() == ""


def test_init_refuses_an_existing_workspace_and_force_keeps_user_files(oryxos_cli):
    config = oryxos_cli.workspace.config_file
    config.write_text("providers: {}\n# mine\n")
    (oryxos_cli.workspace.path / "SOUL.md").unlink()

    refused = oryxos_cli.invoke(["init"])
    assert refused.exit_code == 2
    assert "already exists" in refused.output and "--force" in refused.output

    forced = oryxos_cli.invoke(["init", "--force"])
    assert forced.exit_code == 0, forced.output
    assert config.read_text() == "providers: {}\n# mine\n"
    assert (oryxos_cli.workspace.path / "SOUL.md").is_file()
    assert "created  SOUL.md" in forced.output


def test_status_reports_a_valid_workspace(oryxos_cli, monkeypatch):
    oryxos_cli.workspace.config_file.write_text(
        "providers:\n  ds:\n    model: deepseek/deepseek-chat\n    api_key: ${TEST_DS_KEY}\n"
    )
    monkeypatch.setenv("TEST_DS_KEY", "sk-secret-value-123")
    result = oryxos_cli.invoke(["status", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["config"]["valid"] is True
    assert report["providers"] == [
        {
            "name": "ds",
            "model": "deepseek/deepseek-chat",
            "api_base": None,
            "key": "${TEST_DS_KEY}",
            "key_set": True,
        }
    ]
    assert report["storage"]["rows"]["sessions"] == 0
    assert "sk-secret-value-123" not in result.output


def test_status_shows_an_unset_key_variable_without_failing(oryxos_cli):
    oryxos_cli.workspace.config_file.write_text(
        "providers:\n  ds:\n    model: m\n    api_key: ${TEST_UNSET_KEY_VAR}\n"
    )
    result = oryxos_cli.invoke(["status"])
    assert result.exit_code == 0
    assert "key ${TEST_UNSET_KEY_VAR} NOT SET" in result.output


def test_a_broken_config_is_one_clear_line_and_exit_2(oryxos_cli):
    oryxos_cli.workspace.config_file.write_text("storage:\n  urll: sqlite:///x.db\n")
    result = oryxos_cli.invoke(["status"])
    assert result.exit_code == 2
    assert "config.yaml:2: storage.urll: unknown key; did you mean 'url'?" in result.output
    assert "Traceback" not in result.output


def test_no_workspace_is_a_clear_error(tmp_path, oryxos_cli):
    from click.testing import CliRunner

    from oryxos.cli import build_cli
    from oryxos.commands import CliState
    from oryxos.plugins import get_plugin_manager

    pm = get_plugin_manager()
    result = CliRunner().invoke(
        build_cli(pm), ["--workspace", str(tmp_path / "nowhere"), "status"], obj=CliState(pm=pm)
    )
    assert result.exit_code == 2
    assert "no OryxOS workspace" in result.output and "oryxos init" in result.output


def test_version(oryxos_cli):
    from oryxos import __version__

    result = oryxos_cli.invoke(["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_make_workspace_helper(tmp_path):
    workspace = make_workspace(tmp_path)
    assert workspace.config_file.is_file()


def test_an_unexpected_error_is_one_line_without_traceback(oryxos_cli, oryxos_inline_plugin):
    import click

    def add(cli):
        @cli.command()
        def crash():
            raise RuntimeError("something broke")

    plugin = oryxos_inline_plugin("crasher", oryxos_register_commands=add)
    result = oryxos_cli.invoke(["crash"], plugins=[plugin])
    assert result.exit_code == 1
    assert "error: internal error: RuntimeError: something broke" in result.output
    assert "Traceback" not in result.output
    verbose = oryxos_cli.invoke(["-v", "crash"], plugins=[plugin])
    assert "Traceback" in verbose.output
    assert click  # the plugin API is plain click
