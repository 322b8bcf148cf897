"""The storage interface: what the kernel needs from a database, and the records it stores.

The kernel talks to storage only through these protocols; a storage plugin (the built-in
``oryxos_storage`` on peewee) implements them and registers a factory through
``oryxos_register_storage``. Records are plain dataclasses so that nothing outside the plugin
depends on the ORM. Times are timezone-aware UTC datetimes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from oryxos.workspace import Workspace

T = TypeVar("T")

WhitelistKind = Literal["file", "shell", "http"]
WHITELIST_KINDS: tuple[str, ...] = ("file", "shell", "http")
SESSION_STATUSES: tuple[str, ...] = ("active", "archived")


def utcnow() -> datetime:
    """Now, in UTC, to the millisecond (what the database keeps)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _as_json_dict(obj: Any) -> dict[str, Any]:
    out = asdict(obj)
    for key, value in out.items():
        if isinstance(value, datetime):
            out[key] = value.isoformat().replace("+00:00", "Z")
    return out


@dataclass
class SessionRecord:
    """One conversation: who, through which channel, with which agent, and its history."""

    session_id: str
    profile_name: str
    channel: str = "cli"
    user_id: str = "local"
    messages: list[dict[str, Any]] = field(default_factory=list)
    status: str = "active"
    created_at: datetime = field(default_factory=utcnow)
    last_active_at: datetime = field(default_factory=utcnow)
    archived_at: datetime | None = None
    #: How many times the stored row was saved when this record was read (0: not stored yet).
    #: :meth:`SessionStore.save` stores only if the row is still at this version.
    version: int = 0

    def as_dict(self) -> dict[str, Any]:
        return _as_json_dict(self)


@dataclass
class ToolInvocationRecord:
    """An audit row for one tool call — refused and failed calls included."""

    tool_name: str
    input: dict[str, Any]
    success: bool
    result: str | None = None
    error_message: str | None = None
    duration_ms: int = 0
    session_id: str | None = None
    agent: str | None = None
    channel: str | None = None
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)

    def as_dict(self) -> dict[str, Any]:
        return _as_json_dict(self)


@dataclass
class LlmCallRecord:
    """An audit row for one provider request — failed and retried attempts included."""

    provider: str
    model: str
    success: bool
    duration_ms: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    error_message: str | None = None
    session_id: str | None = None
    agent: str | None = None
    attempt: int = 1
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)

    def as_dict(self) -> dict[str, Any]:
        return _as_json_dict(self)


@dataclass
class NotifyChannelRecord:
    """A registered notify channel. ``secret`` is never shown by any listing, API or log."""

    name: str
    type: str
    url: str
    secret: str | None = None
    description: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)

    def public_dict(self) -> dict[str, Any]:
        """Everything but the secret, the URL's token parts masked; ``has_secret`` tells
        whether a secret is set."""
        from oryxos.secrets import mask_url

        out = _as_json_dict(self)
        out.pop("secret")
        out["has_secret"] = bool(self.secret)
        out["url"] = mask_url(self.url)  # webhook URLs carry the bot's token
        return out


@dataclass
class WhitelistEntry:
    """A sandbox whitelist entry added at run time (config entries are not stored)."""

    kind: str
    value: str
    note: str | None = None
    id: int | None = None
    created_at: datetime = field(default_factory=utcnow)

    def as_dict(self) -> dict[str, Any]:
        return _as_json_dict(self)


@dataclass
class AuditQuery:
    """Filters for audit listings; None means "any"."""

    session_id: str | None = None
    agent: str | None = None
    tool_name: str | None = None
    provider: str | None = None
    success: bool | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = 50
    offset: int = 0


@dataclass
class Page(Generic[T]):
    """One page of a listing and the total number of matching rows."""

    items: list[T]
    total: int
    limit: int
    offset: int


class SessionStore(Protocol):
    def get(self, session_id: str) -> SessionRecord | None: ...

    def save(self, record: SessionRecord) -> None:
        """Insert or update the whole record (history included), then bump ``record.version``.

        Only if the stored row is still at ``record.version`` (no row at all for version 0):
        otherwise another process saved the session since it was read, nothing is written and
        :class:`~oryxos.errors.ConflictError` is raised. The session manager then merges.
        """

    def list(
        self,
        *,
        profile_name: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[SessionRecord]: ...

    def archive(self, session_id: str) -> bool:
        """Mark a session archived; False if there is no such session."""


class AuditStore(Protocol):
    def record_tool_invocation(self, record: ToolInvocationRecord) -> int: ...

    def record_llm_call(self, record: LlmCallRecord) -> int: ...

    def tool_invocations(self, query: AuditQuery) -> Page[ToolInvocationRecord]: ...

    def llm_calls(self, query: AuditQuery) -> Page[LlmCallRecord]: ...

    def prune(self, before: datetime) -> dict[str, int]:
        """Delete the audit rows created before ``before`` (retention); return how many went,
        as ``{"tool_invocations": n, "llm_calls": m}``. Rows from ``before`` on are kept.

        Delete in batches so that writers (turns being audited) are never held up for long.
        """


class WhitelistStore(Protocol):
    def list(self, kind: str | None = None) -> list[WhitelistEntry]: ...

    def add(self, kind: str, value: str, note: str | None = None) -> WhitelistEntry:
        """Add an entry; ConflictError if it exists, UsageError for an unknown kind."""

    def remove(self, kind: str, value: str) -> bool:
        """Remove an entry; False if there was none."""

    def version(self) -> int:
        """A number that changes whenever entries change (for caches)."""


class NotifyChannelStore(Protocol):
    def list(self) -> list[NotifyChannelRecord]: ...

    def get(self, name: str) -> NotifyChannelRecord | None: ...

    def create(self, record: NotifyChannelRecord) -> NotifyChannelRecord:
        """Insert; ConflictError if the name is taken."""

    def update(self, name: str, /, **changes: Any) -> NotifyChannelRecord:
        """Change fields of a channel; NotFoundError if there is none."""

    def delete(self, name: str) -> bool: ...


@runtime_checkable
class Storage(Protocol):
    """A database with every store the kernel uses."""

    url: str
    sessions: SessionStore
    audit: AuditStore
    whitelist: WhitelistStore
    notify_channels: NotifyChannelStore

    def schema_version(self) -> int: ...

    def counts(self) -> dict[str, int]:
        """Row count per table, for ``oryxos status``."""

    def check(self) -> None:
        """Raise StorageError if the database cannot be used (for health checks)."""

    def close(self) -> None: ...


class StorageFactory(Protocol):
    def __call__(self, url: str, workspace: Workspace) -> Storage: ...
