"""mcp_servers.yaml: validation errors name file, line, entry and field; env and secrets rules."""

from __future__ import annotations

import re
import textwrap

import pytest
from oryxos_mcp.config import parse_servers, secret_reasons

from oryxos.errors import ConfigError, FileProblemError


def parse(text: str):
    return parse_servers(textwrap.dedent(text), "mcp_servers.yaml")


def problems(text: str) -> str:
    with pytest.raises(FileProblemError) as info:
        parse(text)
    return str(info.value)


def test_a_valid_file_gives_argv_and_env_templates():
    config = parse(
        """
        servers:
          - name: files
            transport: stdio
            command: npx -y @modelcontextprotocol/server-filesystem "/srv/My Files" /tmp
            env:
              TOKEN: ${SOME_TOKEN}
              PORT: 8080
        """
    )
    (spec,) = config.servers
    assert spec.name == "files"
    # split on whitespace; quotes keep one argument together; nothing is expanded
    assert spec.argv == (
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/srv/My Files",
        "/tmp",
    )
    assert spec.env_template == {"TOKEN": "${SOME_TOKEN}", "PORT": "8080"}
    assert config.warnings == []


@pytest.mark.parametrize("text", ["", "servers:\n", "servers: []\n", "# all commented\n"])
def test_an_empty_file_or_an_empty_list_means_no_servers(text):
    config = parse_servers(text, "mcp_servers.yaml")
    assert config.servers == [] and config.skipped == {}


def test_http_and_sse_entries_are_skipped_with_a_warning_naming_the_entry():
    config = parse(
        """
        servers:
          - name: sentry
            transport: http
            url: https://mcp.sentry.dev/mcp
          - name: old
            transport: sse
            url: https://example.invalid/sse
          - name: local
            command: my-server
        """
    )
    assert [s.name for s in config.servers] == ["local"]
    assert config.skipped == {"sentry": "http", "old": "sse"}
    assert config.warnings[0].startswith("mcp_servers.yaml:3: servers[0] (sentry): transport")
    assert "skipped" in config.warnings[0]
    assert "servers[1] (old)" in config.warnings[1]


def test_an_unknown_key_names_file_line_entry_and_suggests_the_field():
    message = problems(
        """
        servers:
          - name: ok
            command: a
          - name: github
            comand: docker run -i ghcr.io/github/github-mcp-server
        """
    )
    assert (
        "mcp_servers.yaml:6: servers[1] (github).comand: unknown key; did you mean 'command'?"
        in (message)
    )


def test_wrong_types_and_bad_names_are_reported_per_entry():
    message = problems(
        """
        servers:
          - name: "bad name"
            command: x
          - name: t
            transport: websocket
            command: x
          - name: e
            command: x
            env: [A, B]
        """
    )
    assert "servers[0] (bad name).name: String should match pattern" in message
    assert "mcp_servers.yaml:6: servers[1] (t).transport:" in message
    assert "servers[2] (e).env:" in message


def test_a_duplicate_name_names_both_entries():
    message = problems(
        """
        servers:
          - name: git
            command: a
          - name: git
            command: b
        """
    )
    assert "mcp_servers.yaml:5: servers[1] (git).name: duplicate server name 'git'" in message
    assert "servers[0], line 3" in message


def test_a_stdio_entry_needs_a_command():
    message = problems("servers:\n  - name: nothing\n    transport: stdio\n")
    assert "servers[0] (nothing).command: is required for a stdio server" in message


def test_variables_are_never_expanded_in_command():
    message = problems(
        """
        servers:
          - name: gh
            command: github-mcp-server --token ${GITHUB_TOKEN}
        """
    )
    assert "mcp_servers.yaml:4: servers[0] (gh).command: ${GITHUB_TOKEN} is not expanded" in message
    assert "env:" in message


def test_shell_syntax_in_command_is_refused_because_no_shell_runs_it():
    message = problems("servers:\n  - name: s\n    command: my-server | tee log\n")
    assert "servers[0] (s).command: '|' has no effect: the command is not run by a shell" in (
        message
    )
    message = problems("servers:\n  - name: q\n    command: my-server 'unclosed\n")
    assert "servers[0] (q).command: cannot be split into arguments" in message


def test_a_missing_env_variable_is_an_error_naming_file_line_entry_and_key(monkeypatch):
    monkeypatch.delenv("ORYX_MISSING_TOKEN", raising=False)
    monkeypatch.setenv("ORYX_SET_VALUE", "v1")
    config = parse(
        """
        servers:
          - name: gh
            command: github-mcp-server stdio
            env:
              PLAIN: ${ORYX_SET_VALUE}
              GITHUB_PERSONAL_ACCESS_TOKEN: ${ORYX_MISSING_TOKEN}
        """
    )  # loading does not fail: only this server will not start
    with pytest.raises(ConfigError) as info:
        config.servers[0].resolve_env()
    assert str(info.value) == (
        "mcp_servers.yaml:7: servers[0] (gh).env.GITHUB_PERSONAL_ACCESS_TOKEN: "
        "environment variable ORYX_MISSING_TOKEN is not set"
    )
    monkeypatch.setenv("ORYX_MISSING_TOKEN", "tok-12345")
    assert config.servers[0].resolve_env() == {
        "PLAIN": "v1",
        "GITHUB_PERSONAL_ACCESS_TOKEN": "tok-12345",
    }


def test_a_resolved_secret_env_value_is_masked_in_logs(monkeypatch):
    from oryxos.secrets import mask

    monkeypatch.setenv("ORYX_SECRET_FOR_MASK", "s3cr3t-value-for-mask")
    config = parse(
        """
        servers:
          - name: s
            command: x
            env: {API_TOKEN: "${ORYX_SECRET_FOR_MASK}"}
        """
    )
    config.servers[0].resolve_env()
    assert mask("token is s3cr3t-value-for-mask") == "token is ***"


@pytest.mark.parametrize(
    "command, reason",
    [
        ("server --token=abcdef123456", "(--token=...) passes a secret-looking option"),
        ("server --api-key abcdef123456", "argument 2 is the value of --api-key"),
        ("server ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "looks like a GitHub token (ghp_...)"),
        ("server sk-proj-abcdefghijklmnop", "looks like an API key (sk-...)"),
        ("server xoxb-1234-5678-abcdefgh", "looks like a Slack token"),
        ("server glpat-abcdefghij1234567890", "looks like a GitLab token"),
        ("pg postgresql://app:hunter22@db:5432/app", "is a URL with a password in it"),
        ("server Zx9qL2mN7pR4tV8wY1bC5dF3gH6jK0", "looks like a token (long and random)"),
    ],
)
def test_secrets_in_command_are_detected_without_echoing_them(command, reason):
    found = secret_reasons(command.split())
    assert found and reason in found[0]
    secret = command.split()[-1].split("=")[-1]
    assert all(secret not in text for text in found)


@pytest.mark.parametrize(
    "command",
    [
        "npx -y @modelcontextprotocol/server-filesystem /srv/data /home/me/notes",
        "uvx mcp-server-git --repository /srv/repos/oryxos",
        "docker run -i --rm -e GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server",
        "npx -y @playwright/mcp@latest --headless",
        "uvx mcp-server-sqlite --db-path /srv/data/app.db",
        "npx -y @modelcontextprotocol/server-postgres postgresql://app@localhost:5432/appdb",
        "my-server --path /srv/data --transport stdio --keep-alive 30",
    ],
)
def test_ordinary_commands_raise_no_secret_warning(command):
    assert secret_reasons(command.split()) == []


def test_a_secret_in_command_becomes_a_warning_naming_entry_and_line():
    config = parse(
        """
        servers:
          - name: gh
            command: github-mcp-server stdio --token=ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8
        """
    )
    (warning,) = config.warnings
    assert warning.startswith("mcp_servers.yaml:4: servers[0] (gh).command: argument 2 (--token")
    assert "ghp_A1b2" not in warning and "env:" in warning


# The curated catalog ---------------------------------------------------------------------------

CATALOG_NAMES = {
    "github",
    "gitlab",
    "postgres",
    "sqlite",
    "slack",
    "gdrive",
    "notion",
    "filesystem",
    "playwright",
    "puppeteer",
    "brave-search",
    "sentry",
}


def _example_text() -> str:
    from oryxos.commands.init import template_text

    return template_text("mcp_servers.yaml.example")


def uncomment_all(text: str) -> str:
    """Enable every entry: drop the '# ' before the YAML lines of each entry.

    Entry lines are the commented ``- name:`` lines and the commented lines indented under
    them (``#   key: ...``); notes are ``# `` followed by text, which stay comments.
    """
    out = []
    for line in text.splitlines():
        match = re.match(r"^(\s*)# (- name:.*|  \s*[A-Za-z_][A-Za-z0-9_]*:.*)$", line)
        out.append(match.group(1) + match.group(2) if match else line)
    return "\n".join(out) + "\n"


def test_the_shipped_example_connects_to_nothing():
    config = parse_servers(_example_text(), "mcp_servers.yaml.example")
    assert config.servers == [] and config.skipped == {}


def test_every_catalog_entry_parses_with_the_real_loader_once_uncommented():
    config = parse_servers(uncomment_all(_example_text()), "mcp_servers.yaml.example")
    names = {s.name for s in config.servers} | set(config.skipped)
    assert names >= CATALOG_NAMES
    # remote vendor servers are shown as http entries, which the loader skips
    assert set(config.skipped) == {"github-remote", "sentry-remote"}
    # no entry carries a secret in its command; every secret is a ${VAR} in env
    assert [w for w in config.warnings if "command" in w] == []
    for spec in config.servers:
        for key, value in spec.env_template.items():
            if any(word in key for word in ("TOKEN", "KEY", "SECRET", "PASSWORD")):
                assert value.startswith("${"), (spec.name, key)


def test_the_example_documents_prerequisites_and_moved_packages():
    text = _example_text()
    for needed in ("Node.js", "uvx", "servers-archived", "github/github-mcp-server", "verify"):
        assert needed in text, needed


def test_the_config_copy_is_the_template():
    from pathlib import Path

    repo = Path(__file__).resolve().parents[3]
    assert (repo / "config" / "mcp_servers.yaml.example").read_text() == _example_text()


def test_a_secret_in_command_is_masked_in_logs_once_the_file_is_read():
    from oryxos.secrets import mask

    parse(
        """
        servers:
          - name: gh
            command: server --token=ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8 postgresql://u:pw-in-url-77@h/db
        """
    )
    assert mask("echo ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8") == "echo ***"
    assert mask("password pw-in-url-77") == "password ***"
