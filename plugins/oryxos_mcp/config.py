"""``.oryxos/mcp_servers.yaml``: the servers to start, validated with errors that name the entry.

The file has one top-level key, ``servers:``, a list of entries with four fields:

- ``name`` — unique; the catalog group of the server's tools is ``mcp:<name>``;
- ``transport`` — ``stdio`` (the default). ``http`` and ``sse`` entries (which may give a
  ``url``) are skipped with a warning naming the entry: only stdio is supported for now;
- ``command`` — one string, the program and its arguments. It is split like a POSIX shell
  splits words (:func:`shlex.split`: on whitespace, with quotes to keep spaces inside one
  argument) but nothing is expanded and no shell runs it: no ``${VAR}``, no ``~``, no globs,
  no pipes;
- ``env`` — a mapping of variables for the server. ``${VAR}`` is expanded here and only here,
  when the server starts, so a missing variable stops that one server with an error naming the
  file, the line, the entry and the key, and nothing else.

A command line is visible to every user of the machine (``ps``), so a value in ``command`` that
looks like a secret (``--token=…``, ``ghp_…``, ``sk-…``, a password in a URL …) is reported as
a warning; secrets belong in ``env`` as ``${VAR}``.
"""

from __future__ import annotations

import math
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from oryxos.errors import ConfigError, FileProblemError, Problem
from oryxos.secrets import register_secret
from oryxos.yamlfile import (
    Located,
    MissingVariable,
    expand_vars,
    load_model,
    parse_yaml,
    variables_in,
)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"})
#: Environment keys whose values are secrets (masked in logs once resolved).
SECRET_ENV_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PAT", "CREDENTIAL", "AUTH")


class ServerEntry(BaseModel):
    """One entry of ``servers:``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, max_length=64)
    transport: Literal["stdio", "http", "sse"] = "stdio"
    command: str | None = Field(default=None, description="program and arguments (stdio)")
    url: str | None = Field(default=None, description="for http/sse entries (skipped for now)")
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env", mode="before")
    @classmethod
    def _env_values_are_strings(cls, value: Any) -> Any:
        # YAML turns `PORT: 8080` into an int; the environment only holds strings.
        if isinstance(value, dict):
            return {
                k: (str(v).lower() if isinstance(v, bool) else str(v))
                if isinstance(v, int | float | bool)
                else v
                for k, v in value.items()
            }
        return value


class ServersFile(BaseModel):
    """The whole file. ``servers:`` left empty (every entry commented out) means no server."""

    model_config = ConfigDict(extra="forbid")

    servers: list[ServerEntry] | None = None


@dataclass(frozen=True)
class ServerSpec:
    """A validated stdio server, ready to start (its env is expanded by :meth:`resolve_env`)."""

    name: str
    argv: tuple[str, ...]
    env_template: dict[str, str]
    file: str
    index: int
    env_lines: dict[str, int | None] = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``servers[2] (github)``: how problems name this entry."""
        return f"servers[{self.index}] ({self.name})"

    def resolve_env(self, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The env mapping with ``${VAR}`` expanded; a missing variable is a ConfigError."""
        out: dict[str, str] = {}
        problems = []
        for key, template in self.env_template.items():
            try:
                value = expand_vars(template, environ)
            except MissingVariable as err:
                problems.append(
                    Problem(
                        self.file,
                        f"{self.where}.env.{key}",
                        f"environment variable {err.name} is not set",
                        self.env_lines.get(key),
                    )
                )
                continue
            if variables_in(template) and _is_secret_key(key):
                register_secret(value)  # never shown in logs from now on
            out[key] = value
        if problems:
            raise ConfigError(problems)
        return out


@dataclass
class ServersConfig:
    """What the file asks for: stdio servers to start, entries skipped, and warnings."""

    file: str
    servers: list[ServerSpec] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> transport
    warnings: list[str] = field(default_factory=list)

    def get(self, name: str) -> ServerSpec | None:
        return next((s for s in self.servers if s.name == name), None)


def _is_secret_key(key: str) -> bool:
    upper = key.upper()
    return any(word in upper for word in SECRET_ENV_WORDS)


# Secret detection in command lines -----------------------------------------------------------

_SECRET_PREFIXES = (
    ("ghp_", "a GitHub token"),
    ("gho_", "a GitHub token"),
    ("ghu_", "a GitHub token"),
    ("ghs_", "a GitHub token"),
    ("ghr_", "a GitHub token"),
    ("github_pat_", "a GitHub token"),
    ("glpat-", "a GitLab token"),
    ("sk-", "an API key"),
    ("xoxb-", "a Slack token"),
    ("xoxp-", "a Slack token"),
    ("xapp-", "a Slack token"),
    ("ntn_", "a Notion token"),
    ("secret_", "a Notion token"),
    ("sntrys_", "a Sentry token"),
    ("sntryu_", "a Sentry token"),
    ("AKIA", "an AWS access key"),
    ("AIza", "a Google API key"),
)
_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "pass", "key", "apikey", "auth", "pat"}
    | {"credential", "credentials", "accesstoken", "authtoken"}
)
_URL_PASSWORD = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_like_token(value: str) -> bool:
    """A long random-looking word: letters and digits mixed, no path or dotted name."""
    if len(value) < 24 or not re.fullmatch(r"[A-Za-z0-9_\-+=]+", value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and _entropy(value) >= 3.8


def _is_secret_option(arg: str) -> bool:
    """``--api-key``, ``--access_token``, ``-p``-style options whose value is a secret."""
    if not arg.startswith("-") or arg in ("-", "--"):
        return False
    words = re.split(r"[-_.]+", arg.lstrip("-").lower())
    return any(word in _SECRET_WORDS for word in words)


def find_secrets(argv: list[str]) -> list[tuple[str, str]]:
    """``(reason, value)`` for each argument of a command that looks like a secret.

    The reason names the argument's position, never its value; the value is returned so that
    the caller can mask it in logs (a server may echo its arguments on stderr).
    """
    found: list[tuple[str, str]] = []
    for index, arg in enumerate(argv[1:], start=1):
        option, eq, value = arg.partition("=")
        if eq and _is_secret_option(option) and value:
            found.append((f"argument {index} ({option}=...) passes a secret-looking option", value))
            continue
        if _is_secret_option(arg) and not eq and index + 1 < len(argv):
            found.append((f"argument {index + 1} is the value of {arg}", argv[index + 1]))
            continue
        candidate = value if eq else arg
        url = _URL_PASSWORD.match(candidate)
        if url:
            password = candidate[: url.end() - 1].rsplit(":", 1)[1]
            found.append((f"argument {index} is a URL with a password in it", password))
            continue
        for prefix, kind in _SECRET_PREFIXES:
            if candidate.startswith(prefix) and len(candidate) >= len(prefix) + 8:
                found.append((f"argument {index} looks like {kind} ({prefix}...)", candidate))
                break
        else:
            if _looks_like_token(candidate):
                found.append((f"argument {index} looks like a token (long and random)", candidate))
    return found


def secret_reasons(argv: list[str]) -> list[str]:
    """Why some arguments of a command look like secrets (the values themselves not shown)."""
    return [reason for reason, _ in find_secrets(argv)]


# Loading -------------------------------------------------------------------------------------


def _entry_label(data: Any, index: int) -> str:
    try:
        name = data["servers"][index]["name"]
    except (KeyError, IndexError, TypeError):
        return f"servers[{index}]"
    return f"servers[{index}] ({name})" if isinstance(name, str) else f"servers[{index}]"


def _name_entries(problems: list[Problem], data: Any) -> list[Problem]:
    """``servers[2].command`` → ``servers[2] (github).command``: name the entry."""
    out = []
    for problem in problems:
        match = re.match(r"^servers\[(\d+)\]", problem.key)
        if match:
            label = _entry_label(data, int(match.group(1)))
            problem = Problem(
                problem.file,
                label + problem.key[match.end() :],
                problem.message,
                problem.line,
            )
        out.append(problem)
    return out


def parse_servers(text: str, filename: str) -> ServersConfig:
    """Validate the text of an mcp_servers.yaml; raise FileProblemError naming entry and field."""
    located: Located = parse_yaml(text, filename)
    try:
        # keep_vars: nothing is expanded at load time; env values are expanded when the server
        # starts (so one missing variable stops one server), command values never.
        model = load_model(ServersFile, text, filename, keep_vars=lambda path: True)
    except FileProblemError as err:
        raise FileProblemError(_name_entries(err.problems, located.data)) from None

    result = ServersConfig(file=filename)
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(model.servers or []):
        where = f"servers[{index}] ({entry.name})"
        line = located.line_of(("servers", index))
        if entry.name in seen:
            first = seen[entry.name]
            problems.append(
                Problem(
                    filename,
                    f"{where}.name",
                    f"duplicate server name {entry.name!r} (first used by servers[{first}], "
                    f"line {located.line_of(('servers', first, 'name'))})",
                    located.line_of(("servers", index, "name")),
                )
            )
            continue
        seen[entry.name] = index
        if entry.transport != "stdio":
            result.skipped[entry.name] = entry.transport
            result.warnings.append(
                f"{filename}:{line}: {where}: transport {entry.transport!r} is not supported "
                "yet (stdio only); the entry is skipped"
            )
            continue
        spec, entry_problems = _stdio_spec(entry, index, filename, located)
        problems += entry_problems
        if spec is not None:
            result.servers.append(spec)
            cmd_line = located.line_of(("servers", index, "command"))
            for reason, value in find_secrets(list(spec.argv)):
                register_secret(value)  # masked in logs, even if the server echoes it
                result.warnings.append(
                    f"{filename}:{cmd_line}: {where}.command: {reason}; a command line is "
                    "visible to every user of the machine — pass secrets through env: as "
                    "${VAR} instead"
                )
    if problems:
        raise FileProblemError(problems)
    return result


def _stdio_spec(
    entry: ServerEntry, index: int, filename: str, located: Located
) -> tuple[ServerSpec | None, list[Problem]]:
    where = f"servers[{index}] ({entry.name})"

    def problem(key: str, message: str) -> Problem:
        return Problem(
            filename, f"{where}.{key}", message, located.line_of(("servers", index, key))
        )

    if not entry.command or not entry.command.strip():
        return None, [problem("command", "is required for a stdio server")]
    if entry.url is not None:
        return None, [problem("url", "is only for http/sse entries; a stdio server needs none")]
    try:
        argv = shlex.split(entry.command)
    except ValueError as err:
        return None, [problem("command", f"cannot be split into arguments: {err}")]
    found = variables_in(entry.command)
    if found:
        return None, [
            problem(
                "command",
                f"${{{found[0]}}} is not expanded in command (only in env:); pass the value "
                "to the server through env: instead",
            )
        ]
    operators = [arg for arg in argv if arg in SHELL_OPERATORS]
    if operators:
        return None, [
            problem(
                "command",
                f"{operators[0]!r} has no effect: the command is not run by a shell; wrap it in "
                "a script if you need one",
            )
        ]
    env_lines = {key: located.line_of(("servers", index, "env", key)) for key in entry.env}
    return ServerSpec(entry.name, tuple(argv), dict(entry.env), filename, index, env_lines), []


def load_servers(path: Path) -> ServersConfig:
    """Read a workspace's mcp_servers.yaml; a missing file means no servers."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ServersConfig(file=str(path))
    except (OSError, UnicodeDecodeError) as err:
        raise FileProblemError([Problem(str(path), "", f"cannot read the file: {err}")]) from None
    return parse_servers(text, str(path))


__all__ = [
    "ServerEntry",
    "ServerSpec",
    "ServersConfig",
    "load_servers",
    "parse_servers",
    "secret_reasons",
]
