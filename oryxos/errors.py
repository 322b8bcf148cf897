"""Errors that OryxOS reports to people.

Every error a user can cause derives from :class:`OryxError`, carries a message that names the
thing at fault and what was expected, and knows the process exit code it maps to. The CLI prints
``error: <message>`` for these and never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Exit codes shared by every command.
EXIT_OK = 0
EXIT_FAILURE = 1  # the operation ran and failed (a tool failed, a provider failed, ...)
EXIT_USAGE = 2  # bad input: arguments, configuration, files


class OryxError(Exception):
    """Base class for errors meant for a person; ``str(err)`` is the whole message."""

    exit_code = EXIT_FAILURE


class UsageError(OryxError):
    """Bad input from the person at the keyboard (arguments, names, JSON)."""

    exit_code = EXIT_USAGE


class NotFoundError(OryxError):
    """A named thing (agent, session, channel, tool, ...) does not exist."""

    exit_code = EXIT_USAGE


class ConflictError(OryxError):
    """The operation clashes with what is stored (duplicate name, thing in use)."""

    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class Problem:
    """One problem found in a file: where it is and what was expected."""

    file: str
    key: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        key = f" {self.key}:" if self.key else ""
        return f"{where}:{key} {self.message}"


class FileProblemError(OryxError):
    """A file (config.yaml, AGENT.md, mcp_servers.yaml, ...) is invalid.

    The message is one line per problem, each naming the file, the line and the key path.
    """

    exit_code = EXIT_USAGE

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ConfigError(FileProblemError):
    """``.oryxos/config.yaml`` is missing, unreadable or invalid."""


class StartupError(OryxError):
    """The runtime cannot start: a plugin clashes with another or registered something invalid."""

    exit_code = EXIT_USAGE


class WorkspaceError(OryxError):
    """No workspace where one is needed, or one where ``init`` would create it."""

    exit_code = EXIT_USAGE


class StorageError(OryxError):
    """The database cannot be reached or migrated."""
