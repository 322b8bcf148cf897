"""config.yaml: validation, ${VAR} expansion and errors that name file, key and line."""

from __future__ import annotations

import pytest

from oryxos.config import Config, load_config, parse_config
from oryxos.errors import ConfigError
from oryxos.workspace import Workspace


def problems(text: str, env: dict[str, str] | None = None, monkeypatch=None) -> list[str]:
    with pytest.raises(ConfigError) as err:
        parse_config(text, "config.yaml")
    return str(err.value).splitlines()


def test_empty_file_means_defaults():
    config = parse_config("", "config.yaml")
    assert config.model_dump() == Config().model_dump()
    assert config.storage.url == "sqlite:///.oryxos/oryxos.db"
    assert config.sandbox.file.allowed_paths == []
    assert config.server.host == "127.0.0.1"


def test_the_init_template_is_valid():
    from oryxos.commands.init import template_text

    config = parse_config(template_text("config.yaml"), "config.yaml")
    assert config.storage.backend == "peewee"


def test_variables_are_expanded(monkeypatch):
    monkeypatch.setenv("T_HOST", "0.0.0.0")
    monkeypatch.delenv("T_PORT", raising=False)
    config = parse_config(
        "server:\n  host: ${T_HOST}\n  port: ${T_PORT:-9090}\n"
        "sandbox:\n  file:\n    allowed_paths: ['$${literal}', '${T_HOST}/x']\n",
        "config.yaml",
    )
    assert config.server.host == "0.0.0.0"
    assert config.server.port == 9090
    assert config.sandbox.file.allowed_paths == ["${literal}", "0.0.0.0/x"]


def test_a_missing_variable_names_file_key_line_and_variable(monkeypatch):
    monkeypatch.delenv("T_MISSING", raising=False)
    assert problems("server:\n  host: x\n  port: ${T_MISSING}\n") == [
        "config.yaml:3: server.port: environment variable T_MISSING is not set"
    ]


def test_secrets_stay_references_until_used(monkeypatch):
    monkeypatch.delenv("T_KEY", raising=False)
    config = parse_config("providers:\n  p:\n    model: m\n    api_key: ${T_KEY}\n", "c.yaml")
    ref = config.providers["p"].api_key
    assert ref.template == "${T_KEY}" and not ref.is_set()
    with pytest.raises(
        ConfigError, match=r"c.yaml:4: providers.p.api_key: environment variable T_KEY"
    ):
        ref.resolve()
    monkeypatch.setenv("T_KEY", "sk-abc-123")
    assert ref.resolve() == "sk-abc-123"
    assert "sk-abc" not in repr(config)


def test_unknown_keys_get_a_suggestion():
    assert problems("sandbox:\n  shell:\n    alowed_commands: [ls]\n") == [
        "config.yaml:3: sandbox.shell.alowed_commands: unknown key; did you mean 'allowed_commands'?"
    ]
    assert problems("provider: {}\n") == [
        "config.yaml:1: provider: unknown key; did you mean 'providers'?"
    ]


def test_an_unknown_key_without_a_close_match_lists_the_choices():
    (line,) = problems("server:\n  zzz: 1\n")
    assert line.startswith("config.yaml:2: server.zzz: unknown key; expected one of: api_token")


def test_wrong_types_say_what_was_expected():
    (line,) = problems("server:\n  port: eighty\n")
    assert line.startswith("config.yaml:2: server.port: input should be a valid integer")
    assert "(got 'eighty')" in line
    (line,) = problems("providers:\n  p:\n    timeout: 5\n")
    assert line == "config.yaml:2: providers.p.model: is required"


def test_all_problems_are_reported_in_line_order():
    lines = problems("server:\n  port: x\nstorage:\n  urll: y\n")
    assert [ln.split(":")[1] for ln in lines] == ["2", "4"]


def test_yaml_syntax_errors_name_the_line():
    (line,) = problems("storage:\n  url: [unclosed\nserver: {}\n")
    assert line.startswith("config.yaml:") and "YAML syntax error" in line


def test_the_top_level_must_be_a_mapping():
    assert problems("- a\n- b\n") == [
        "config.yaml:1: expected a mapping of keys to values at the top level"
    ]


def test_a_missing_file_says_how_to_create_it(tmp_path):
    with pytest.raises(ConfigError, match="oryxos init"):
        load_config(tmp_path / "config.yaml")


def test_prescan_tolerates_broken_files(tmp_path):
    workspace = Workspace(tmp_path)
    assert workspace.disabled_plugins() == []  # no config.yaml at all
    workspace.config_file.write_text("plugins:\n  disabled: [mcp, web]\n")
    assert workspace.disabled_plugins() == ["mcp", "web"]
    workspace.config_file.write_text("plugins: [\n")
    assert workspace.disabled_plugins() == []
