"""The SandboxChecker: three deny-by-default whitelists that every tool call passes first.

- **files**: a path is allowed when its real path (``~``, relative paths, ``..``, symlinks and
  ``/proc/self/root`` resolved by ``realpath``) lies inside an allowed root, compared component
  by component. Roots: the workspace's project directory, ``sandbox.file.allowed_paths`` and the
  runtime ``file`` entries; reads also accept the caller's ``extra_read_roots`` (the agent's
  skill folders). The database files are never readable or writable through tools, and
  ``config.yaml`` / ``mcp_servers.yaml`` are never writable (they would widen the sandbox).
- **shell**: the line is parsed by :mod:`oryxos.shell_syntax` (a small sh subset; what it does
  not understand is refused) and every command in it must match ``sandbox.shell.allowed_commands``
  or a runtime ``shell`` entry; programs that run other programs (``env``, ``xargs``, shells,
  ``sudo``, ``find -exec`` ...) are refused even when listed; redirection targets pass the file
  whitelist.
- **http**: the URL's host, normalised (case, trailing dot, IDN, IPv4 spellings), must match
  ``sandbox.http.allowed_domains`` or a runtime ``http`` entry, exactly or through a ``*.``
  wildcard; URLs with user info are refused; link-local and cloud metadata addresses are refused
  unless ``sandbox.http.allow_link_local``.

Runtime entries live in the database (``runtime.storage.whitelist``); they are re-read whenever
the store's ``version()`` changes, so ``oryxos sandbox add`` in another process applies to a
running server at its next check. docs/sandbox.md is the user-facing description of all this.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import os
import re
import shlex
import shutil
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from oryxos.errors import EXIT_FAILURE, OryxError

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext
    from oryxos.config import Config
    from oryxos.shell_syntax import ShellPlan, SimpleCommand
    from oryxos.storage import WhitelistStore
    from oryxos.workspace import Workspace

log = logging.getLogger("oryxos.sandbox")

RULE_FILE = "sandbox.file.allowed_paths"
RULE_FILE_PROTECTED = "sandbox.file.protected"
RULE_SHELL = "sandbox.shell.allowed_commands"
RULE_SHELL_SYNTAX = "sandbox.shell.syntax"
RULE_SHELL_RUNNER = "sandbox.shell.runners"
RULE_HTTP = "sandbox.http.allowed_domains"
RULE_HTTP_URL = "sandbox.http.url"
RULE_HTTP_LINK_LOCAL = "sandbox.http.allow_link_local"

#: Programs whose job is to run another program named in their arguments. The whitelist would
#: check only the wrapper, so they are refused even when listed (docs/sandbox.md).
_RUNNERS = """
    env xargs exec eval nohup timeout nice ionice stdbuf sudo su doas chroot setsid time command
    builtin watch flock strace ltrace unbuffer script parallel source . chrt taskset unshare
    nsenter runuser setpriv prlimit systemd-run at batch sh bash zsh dash ksh mksh fish csh tcsh
    ash rbash busybox
"""
COMMAND_RUNNERS = frozenset(_RUNNERS.split())
#: Options with which a listed program runs another command.
RUNNER_OPTIONS = {"find": frozenset({"-exec", "-execdir", "-ok", "-okdir"})}
#: Link-local and cloud metadata addresses refused unless sandbox.http.allow_link_local.
LINK_LOCAL_NETWORKS = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
)
METADATA_ADDRESSES = frozenset(
    {
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud metadata
    }
)
_ASCII_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_IPV4_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)")
AGENT_FILE = "AGENT.md"
_BAD_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]")


class SandboxViolation(OryxError):
    """A tool call the sandbox refuses. ``rule`` is the config key (or rule name) that failed."""

    exit_code = EXIT_FAILURE

    def __init__(self, rule: str, message: str):
        self.rule = rule
        self.detail = message
        super().__init__(f"refused by sandbox rule {rule}: {message}")


class CommandNotFound(OryxError):
    """A whitelisted command that is not installed (a retryable tool error, not a refusal)."""


@dataclass(frozen=True)
class CheckedUrl:
    """A URL that passed the HTTP whitelist, with its host normalised."""

    url: str
    scheme: str
    host: str  # lower-case ASCII (punycode), no trailing dot; an IP in canonical form
    port: int | None
    is_ip: bool


# ---------------------------------------------------------------------------------------------
# Host normalisation (shared by URLs and whitelist entries)
# ---------------------------------------------------------------------------------------------


def normalise_host(host: str) -> tuple[str, bool]:
    """``(canonical host, is_ip)``: lower case, one trailing dot dropped, IDN to punycode,
    every IPv4 spelling (``0x7f.1``, ``2130706433``) to dotted decimal.

    Raises ValueError for something that is not a host name or address.
    """
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        return str(ipaddress.IPv6Address(host[1:-1])), True
    if host.endswith("."):
        host = host[:-1]
    if not host or "%" in host or "@" in host or (":" in host and host.count(":") < 2):
        raise ValueError(f"not a host name: {host!r}")
    if ":" in host:
        return str(ipaddress.IPv6Address(host)), True
    lowered = host.lower()
    labels = lowered.split(".")
    if all(_NUMERIC_IPV4_LABEL.fullmatch(label) for label in labels):
        try:
            return socket.inet_ntoa(socket.inet_aton(lowered)), True
        except OSError:
            raise ValueError(f"not a valid IPv4 address: {host!r}") from None
    if any(not label for label in labels):
        raise ValueError(f"empty label in host name {host!r}")
    if lowered.isascii():  # ASCII (punycode included) compares as is; '_' occurs in real names
        if not all(_ASCII_LABEL.fullmatch(label) for label in labels):
            raise ValueError(f"not a valid host name: {host!r}")
        return lowered, False
    import idna  # imported here: most commands never check a URL

    try:
        ascii_host = idna.encode(lowered, uts46=True).decode("ascii")
    except idna.IDNAError as err:
        raise ValueError(f"not a valid host name {host!r}: {err}") from None
    return ascii_host.lower(), False


def host_matches(host: str, is_ip: bool, pattern: str) -> bool:
    """Does a normalised host match a normalised whitelist entry?

    ``*.example.com`` matches ``a.example.com`` and ``a.b.example.com`` but not
    ``example.com`` itself, nor ``evilexample.com``. IP addresses match only exact entries.
    """
    if pattern.startswith("*."):
        return not is_ip and host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return host == pattern


def parse_host_pattern(entry: str) -> str:
    """A ``sandbox.http`` entry normalised like hosts (``*.`` kept), or ValueError."""
    entry = entry.strip()
    wildcard = entry.startswith("*.")
    host, is_ip = normalise_host(entry[2:] if wildcard else entry)
    if wildcard and is_ip:
        raise ValueError(f"a wildcard cannot apply to an IP address: {entry!r}")
    return "*." + host if wildcard else host


def shell_entry_problem(entry: str) -> str | None:
    """Why a shell whitelist entry could never allow anything, or None if it is usable."""
    try:
        words = shlex.split(entry)
    except ValueError as err:
        return f"cannot read the command entry {entry!r}: {err}"
    if not words:
        return "a shell entry names a program, e.g. 'ls' or 'git status'"
    if os.path.basename(words[0]) in COMMAND_RUNNERS:
        return (
            f"{words[0]!r} runs other programs and is always refused by the sandbox; "
            "list the programs themselves instead"
        )
    return None


@functools.lru_cache(maxsize=1024)  # one warning per bad entry, not one per check
def _normalise_pattern(entry: str) -> str | None:
    try:
        return parse_host_pattern(entry)
    except ValueError:
        log.warning("ignoring sandbox.http entry %r: not a host name or *.domain", entry)
        return None


# ---------------------------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------------------------


class SandboxChecker:
    """Checks paths, command lines, URLs and addresses against the whitelists.

    :param whitelist: the runtime whitelist store, or a function returning it (called lazily,
        so that a command that never checks anything never opens the database). None: config
        entries only.
    """

    def __init__(
        self,
        config: Config,
        workspace: Workspace,
        whitelist: WhitelistStore | Callable[[], WhitelistStore | None] | None = None,
    ):
        self.config = config
        self.workspace = workspace
        self._whitelist_source = whitelist
        self._lock = threading.Lock()
        self._version: int | None = None
        self._runtime: dict[str, list[str]] = {}
        self._store_failed = False

    # Runtime entries -------------------------------------------------------------------------

    def _store(self) -> WhitelistStore | None:
        source = self._whitelist_source
        if source is None or self._store_failed:
            return None
        if callable(source) and not hasattr(source, "version"):
            try:
                store = source()
            except OryxError as err:  # no storage plugin: config entries only (still deny-all)
                log.warning("sandbox: runtime whitelist unavailable, using config only: %s", err)
                self._store_failed = True
                return None
            self._whitelist_source = store
            return store
        return source  # type: ignore[return-value]

    def runtime_entries(self, kind: str) -> list[str]:
        """Runtime entries of one kind, re-read when the store's version changes."""
        store = self._store()
        if store is None:
            return []
        try:
            version = store.version()
            with self._lock:
                if version != self._version:
                    entries: dict[str, list[str]] = {}
                    for entry in store.list():
                        entries.setdefault(entry.kind, []).append(entry.value)
                    self._runtime, self._version = entries, version
                return list(self._runtime.get(kind, []))
        except Exception as err:  # fail closed: config entries only
            log.error("sandbox: cannot read the runtime whitelist: %s", err)
            return []

    def entries(self, kind: str) -> list[tuple[str, str]]:
        """Every effective entry of a kind as ``(value, source)``; source is config or runtime."""
        config = {
            "file": self.config.sandbox.file.allowed_paths,
            "shell": self.config.sandbox.shell.allowed_commands,
            "http": self.config.sandbox.http.allowed_domains,
        }[kind]
        return [(value, "config") for value in config] + [
            (value, "runtime") for value in self.runtime_entries(kind)
        ]

    # Files -----------------------------------------------------------------------------------

    def _real(self, value: str | os.PathLike[str]) -> Path:
        path = Path(os.path.expanduser(os.fspath(value)))
        if not path.is_absolute():
            path = self.workspace.project_dir / path
        return Path(os.path.realpath(path))

    def file_roots(self, *, write: bool = False, ctx: ToolContext | None = None) -> list[Path]:
        """The real paths under which files may be used (reads: plus the context's roots)."""
        roots = [self._real(self.workspace.project_dir)]
        roots += [self._real(value) for value, _ in self.entries("file")]
        if not write and ctx is not None:
            roots += [self._real(root) for root in getattr(ctx, "extra_read_roots", ())]
        return roots

    def protected_paths(self, *, write: bool = False) -> set[Path]:
        """Real paths no tool may use (for writes: also the files that configure the sandbox);
        for tools that walk directories, which check each file without asking per file."""
        database, config_files = self._protected()
        return database | config_files if write else database

    def _protected(self) -> tuple[set[Path], set[Path]]:
        """(never read or written, never written) real paths."""
        database: set[Path] = set()
        url = self.config.storage.url
        if url.startswith("sqlite:///"):
            db = self._real(self.workspace.resolve(url[len("sqlite:///") :]))
            database = {db, *(Path(f"{db}{suffix}") for suffix in ("-wal", "-shm", "-journal"))}
        config_files = {
            self._real(self.workspace.config_file),
            self._real(self.workspace.mcp_servers_file),
            # an agent's AGENT.md lists its tools: editing it would grant tools nobody granted
            *(self._real(p) for p in self.workspace.agents_dir.glob(f"*/{AGENT_FILE}")),
        }
        return database, config_files

    def _is_memory_or_user_file(self, real: Path) -> bool:
        """USER.md (the person's own file) or anything in the memory folder (MEMORY.md, its
        lock and backups): the memory plugin writes them under its own lock, tools never."""
        if real == self._real(self.workspace.path / "USER.md"):
            return True
        memory_dir = self._real(self.workspace.memory_dir)
        return real == memory_dir or real.is_relative_to(memory_dir)

    def _is_agent_file(self, real: Path) -> bool:
        """A (possibly new) AGENT.md directly inside an agent's directory."""
        return real.name == AGENT_FILE and real.parent.parent == self._real(
            self.workspace.agents_dir
        )

    def check_path(
        self,
        path: str | os.PathLike[str],
        *,
        write: bool = False,
        ctx: ToolContext | None = None,
    ) -> Path:
        """The real path to operate on, or SandboxViolation naming the rule.

        For a path that does not exist yet, ``realpath`` resolves its nearest existing parent
        and keeps the rest, so a new file is allowed exactly when it would be created inside an
        allowed root.
        """
        text = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(text, str) or not text.strip():
            raise SandboxViolation(RULE_FILE, "the path is empty")
        if "\x00" in text:
            raise SandboxViolation(RULE_FILE, "the path contains a NUL byte")
        real = self._real(text)
        database, config_files = self._protected()
        if real in database or (write and (real in config_files or self._is_agent_file(real))):
            what = "the database" if real in database else "a file that configures the sandbox"
            raise SandboxViolation(
                RULE_FILE_PROTECTED, f"{real} is {what} and cannot be used through tools"
            )
        if write and self._is_memory_or_user_file(real):
            raise SandboxViolation(
                RULE_FILE_PROTECTED,
                f"{real} is the user's USER.md or long-term memory: USER.md is never written by "
                "tools, and memory only through save_memory",
            )
        if write and any(p.is_relative_to(real) for p in database | config_files):
            # moving or replacing a directory that holds them (.oryxos, the project directory)
            raise SandboxViolation(
                RULE_FILE_PROTECTED,
                f"{real} holds the database or the sandbox configuration and cannot be moved "
                "or replaced through tools",
            )
        roots = self.file_roots(write=write, ctx=ctx)
        if any(real == root or real.is_relative_to(root) for root in roots):
            return real
        action = "written" if write else "read"
        shown = text if real == Path(text) else f"{text} (real path {real})"
        raise SandboxViolation(
            RULE_FILE,
            f"{shown} may not be {action}: it is outside the workspace "
            f"{roots[0]} and every allowed path",
        )

    # Shell -----------------------------------------------------------------------------------

    def check_command(self, line: str, *, ctx: ToolContext | None = None) -> ShellPlan:
        """The plan of a command line whose every command is whitelisted, or SandboxViolation.

        Each command's ``executable`` is filled in with the real path of the program that will
        run, and redirection targets are replaced by their checked real paths.
        """
        from oryxos.shell_syntax import ShellSyntaxError, parse

        if not isinstance(line, str):
            raise SandboxViolation(RULE_SHELL_SYNTAX, "the command must be a string")
        try:
            plan = parse(line)
        except ShellSyntaxError as err:
            raise SandboxViolation(RULE_SHELL_SYNTAX, str(err)) from None
        entries = [value for value, _ in self.entries("shell")]
        patterns = []
        for entry in entries:
            try:
                words = shlex.split(entry)
            except ValueError:
                continue
            if words:
                patterns.append(words)
        for command in plan.commands():
            self._check_simple_command(command, patterns)
            for redirect in command.redirects:
                if redirect.target and redirect.target != os.devnull:
                    real = self.check_path(redirect.target, write=redirect.mode != "r", ctx=ctx)
                    redirect.target = str(real)
        return plan

    def _which(self, name: str) -> str | None:
        found = shutil.which(name)
        return os.path.realpath(found) if found else None

    def _check_simple_command(self, command: SimpleCommand, patterns: list[list[str]]) -> None:
        argv = command.argv
        program = argv[0]
        if command.words[0].glob or command.words[0].tilde:
            raise SandboxViolation(
                RULE_SHELL_SYNTAX,
                f"the program name may not be a pattern or start with '~': {program}",
            )
        if "/" in program:
            given = self._real(program)
            executable = str(given) if os.access(given, os.X_OK) and given.is_file() else None
        else:
            executable = self._which(program)
        names = {os.path.basename(program)}
        if executable and os.path.basename(executable) != "busybox":
            names.add(os.path.basename(executable))
        runner = names & COMMAND_RUNNERS
        if runner:
            raise SandboxViolation(
                RULE_SHELL_RUNNER,
                f"{program!r} runs other programs that the whitelist cannot check, so it is "
                "never allowed (docs/sandbox.md)",
            )
        for name in names:
            bad = RUNNER_OPTIONS.get(name, frozenset()) & set(argv[1:])
            if bad:
                raise SandboxViolation(
                    RULE_SHELL_RUNNER,
                    f"{program} {sorted(bad)[0]} runs other programs, which is never allowed",
                )
        if not patterns:
            raise SandboxViolation(
                RULE_SHELL, f"{program!r} is not allowed: the shell whitelist is empty"
            )
        if not any(self._matches(program, executable, argv, p) for p in patterns):
            raise SandboxViolation(RULE_SHELL, f"command {program!r} is not in the shell whitelist")
        if executable is None:
            raise CommandNotFound(f"command not found: {program}")
        command.executable = executable

    def _matches(
        self, program: str, executable: str | None, argv: list[str], pattern: list[str]
    ) -> bool:
        """A command matches an entry when the program is the same and the entry's extra words
        (``git status``) start its arguments. A program given as a path matches a bare-name
        entry only if it is the very file that name finds on PATH, and vice versa."""
        head = pattern[0]
        if argv[1 : len(pattern)] != pattern[1:]:
            return False
        if "/" not in head and "/" not in program:
            return head == program
        if executable is None:
            return False
        wanted = str(self._real(head)) if "/" in head else self._which(head)
        return wanted is not None and wanted == executable

    # HTTP ------------------------------------------------------------------------------------

    def check_host(self, host: str) -> tuple[str, bool]:
        """``(normalised host, is_ip)`` of a whitelisted host, or SandboxViolation."""
        try:
            normal, is_ip = normalise_host(host)
        except ValueError as err:
            raise SandboxViolation(RULE_HTTP_URL, str(err)) from None
        if is_ip:
            self.check_address(normal)
        patterns = [p for p in (_normalise_pattern(v) for v, _ in self.entries("http")) if p]
        if not patterns:
            raise SandboxViolation(
                RULE_HTTP, f"host {normal!r} is not allowed: the HTTP whitelist is empty"
            )
        if not any(host_matches(normal, is_ip, pattern) for pattern in patterns):
            raise SandboxViolation(RULE_HTTP, f"host {normal!r} is not in the HTTP whitelist")
        return normal, is_ip

    def check_url(self, url: str) -> CheckedUrl:
        """A URL whose host is whitelisted (http and https only; no user info), or
        SandboxViolation. The returned URL is what the caller should request."""
        if not isinstance(url, str) or not url:
            raise SandboxViolation(RULE_HTTP_URL, "the URL is empty")
        if _BAD_URL_CHARS.search(url):
            raise SandboxViolation(
                RULE_HTTP_URL, "the URL contains spaces, control characters or backslashes"
            )
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as err:
            raise SandboxViolation(RULE_HTTP_URL, f"not a valid URL: {err}") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise SandboxViolation(RULE_HTTP_URL, f"only http and https URLs are allowed: {url}")
        if "@" in parts.netloc:
            raise SandboxViolation(
                RULE_HTTP_URL,
                "URLs with user info ('user@host') are refused: the host is ambiguous to readers",
            )
        raw_host = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
        if not raw_host:
            raise SandboxViolation(RULE_HTTP_URL, f"the URL has no host: {url}")
        host, is_ip = self.check_host(raw_host)
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
        normal = parts._replace(scheme=scheme, netloc=netloc).geturl()
        return CheckedUrl(normal, scheme, host, port, is_ip)

    def check_address(self, ip: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        """Refuse link-local and cloud metadata addresses (e.g. after DNS resolution) unless
        ``sandbox.http.allow_link_local``."""
        try:
            address = ipaddress.ip_address(str(ip).split("%", 1)[0].strip("[]"))
        except ValueError:
            raise SandboxViolation(RULE_HTTP_URL, f"not an IP address: {ip!r}") from None
        if self.config.sandbox.http.allow_link_local:
            return address
        candidates = [address]
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            candidates.append(address.ipv4_mapped)
        for candidate in candidates:
            if candidate in METADATA_ADDRESSES or any(
                candidate in network for network in LINK_LOCAL_NETWORKS
            ):
                raise SandboxViolation(
                    RULE_HTTP_LINK_LOCAL,
                    f"{address} is a link-local or cloud metadata address",
                )
        return address

    # Dispatch used by the executor -------------------------------------------------------------

    def check_argument(self, kind: str, value: Any, ctx: ToolContext | None = None) -> Any:
        """Check one tool argument declared in ``Tool.sandbox_args``; return the value the tool
        should receive (the real path for files, the normalised URL for http)."""
        if kind in ("file", "file_write"):
            return str(self.check_path(value, write=kind == "file_write", ctx=ctx))
        if kind == "shell":
            self.check_command(value, ctx=ctx)
            return value
        if kind == "http":
            return self.check_url(value).url
        raise ValueError(f"unknown sandbox argument kind {kind!r}")
