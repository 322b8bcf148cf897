"""PeeweeStorage: sessions, audit, whitelist and notify-channel stores on one peewee database.

Model classes are made per database (:func:`make_models`) so that several storages — one per
test, say — never share a binding. SQLite runs in WAL mode with ``synchronous=normal``; every
write is its own IMMEDIATE transaction, so concurrent writers from threads and processes wait
for each other instead of failing.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import peewee as pw

from oryxos.errors import ConflictError, NotFoundError, StorageError, UsageError
from oryxos.storage import (
    WHITELIST_KINDS,
    AuditQuery,
    LlmCallRecord,
    NotifyChannelRecord,
    Page,
    SessionRecord,
    ToolInvocationRecord,
    WhitelistEntry,
    utcnow,
)
from oryxos.workspace import Workspace
from oryxos_storage.migrations import current_version, migrate, write_transaction

SQLITE_PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "foreign_keys": 1,
    "busy_timeout": 30000,
}
SQLITE_PREFIX = "sqlite:///"
#: Audit rows deleted per statement by ``prune`` (a short write lock each).
PRUNE_BATCH = 5000


def _fields_of(record: Any) -> dict[str, Any]:
    """A record dataclass's fields as a new dict, values not copied.

    ``dataclasses.asdict`` deep-copies every value; audit rows are written on the turn's
    critical path and their values are only read (serialised) here, so a shallow copy serves.
    """
    return dict(vars(record))


def _to_db(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


def _from_db(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def make_models(db: pw.Database) -> dict[str, type[pw.Model]]:
    """Model classes bound to ``db``; the schema itself comes from the migrations."""

    class Base(pw.Model):
        class Meta:
            database = db

    class Session(Base):
        session_id = pw.CharField(primary_key=True)
        profile_name = pw.CharField()
        channel = pw.CharField()
        user_id = pw.CharField()
        messages_json = pw.TextField()
        status = pw.CharField()
        created_at = pw.DateTimeField()
        last_active_at = pw.DateTimeField()
        archived_at = pw.DateTimeField(null=True)
        version = pw.IntegerField(default=0)

        class Meta:
            table_name = "sessions"

    class ToolInvocation(Base):
        id = pw.AutoField()
        session_id = pw.CharField(null=True)
        agent = pw.CharField(null=True)
        channel = pw.CharField(null=True)
        tool_name = pw.CharField()
        input_json = pw.TextField()
        result_json = pw.TextField(null=True)
        success = pw.BooleanField()
        error_message = pw.TextField(null=True)
        duration_ms = pw.BigIntegerField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "tool_invocations"

    class LlmCall(Base):
        id = pw.AutoField()
        session_id = pw.CharField(null=True)
        agent = pw.CharField(null=True)
        provider = pw.CharField()
        model = pw.CharField()
        prompt_tokens = pw.IntegerField()
        completion_tokens = pw.IntegerField()
        total_tokens = pw.IntegerField()
        duration_ms = pw.BigIntegerField()
        success = pw.BooleanField()
        error_message = pw.TextField(null=True)
        attempt = pw.IntegerField()
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "llm_calls"

    class NotifyChannel(Base):
        id = pw.AutoField()
        name = pw.CharField(unique=True)
        type = pw.CharField()
        url = pw.TextField()
        secret = pw.TextField(null=True)
        description = pw.TextField(null=True)
        created_at = pw.DateTimeField()
        updated_at = pw.DateTimeField()

        class Meta:
            table_name = "notify_channels"

    class Whitelist(Base):
        id = pw.AutoField()
        kind = pw.CharField()
        value = pw.TextField()
        note = pw.TextField(null=True)
        created_at = pw.DateTimeField()

        class Meta:
            table_name = "sandbox_whitelist"

    class Meta(Base):
        key = pw.CharField(primary_key=True)
        value = pw.BigIntegerField()

        class Meta:
            table_name = "oryxos_meta"

    return {
        "Session": Session,
        "ToolInvocation": ToolInvocation,
        "LlmCall": LlmCall,
        "NotifyChannel": NotifyChannel,
        "Whitelist": Whitelist,
        "Meta": Meta,
    }


class _Store:
    def __init__(self, db: pw.Database, models: dict[str, type[pw.Model]]):
        self.db = db
        self.m = models


class PeeweeSessionStore(_Store):
    """Sessions. ``get`` and ``save`` run on every turn, so they use prepared statements.

    ``save`` is one optimistic statement: insert, or update only if the stored ``version`` is
    still the one the record was read at (see :meth:`oryxos.storage.SessionStore.save`).
    """

    COLUMNS = (
        "session_id",
        "profile_name",
        "channel",
        "user_id",
        "messages_json",
        "status",
        "created_at",
        "last_active_at",
        "archived_at",
        "version",
    )

    def __init__(self, db: pw.Database, models: dict[str, type[pw.Model]]):
        super().__init__(db, models)
        p = db.param
        marks = ", ".join([p] * len(self.COLUMNS))
        updates = ", ".join(
            f"{c} = excluded.{c}"
            for c in self.COLUMNS
            if c not in ("session_id", "created_at", "version")
        )
        # INSERT ... ON CONFLICT DO UPDATE ... WHERE: SQLite >= 3.24 and PostgreSQL. A row at
        # another version is left alone and the statement changes no row.
        self._upsert = (
            f"INSERT INTO sessions ({', '.join(self.COLUMNS)}) VALUES ({marks}) "
            f"ON CONFLICT (session_id) DO UPDATE SET {updates}, "
            f"version = sessions.version + 1 WHERE sessions.version = {p}"
        )
        self._select = f"SELECT {', '.join(self.COLUMNS)} FROM sessions WHERE session_id = {p}"
        fields = models["Session"]._meta.fields
        self._fields = [fields[c] for c in self.COLUMNS]

    def _record(self, row: Any) -> SessionRecord:
        return SessionRecord(
            session_id=row.session_id,
            profile_name=row.profile_name,
            channel=row.channel,
            user_id=row.user_id,
            messages=json.loads(row.messages_json),
            status=row.status,
            created_at=_from_db(row.created_at),  # type: ignore[arg-type]
            last_active_at=_from_db(row.last_active_at),  # type: ignore[arg-type]
            archived_at=_from_db(row.archived_at),
            version=int(row.version or 0),
        )

    def get(self, session_id: str) -> SessionRecord | None:
        row = self.db.execute_sql(self._select, (session_id,)).fetchone()
        if row is None:
            return None
        values = {f.name: f.python_value(v) for f, v in zip(self._fields, row, strict=True)}
        return self._record(SimpleNamespace(**values))

    def save(self, record: SessionRecord) -> None:
        values = {
            "session_id": record.session_id,
            "profile_name": record.profile_name,
            "channel": record.channel,
            "user_id": record.user_id,
            "messages_json": json.dumps(record.messages, ensure_ascii=False),
            "status": record.status,
            "created_at": _to_db(record.created_at),
            "last_active_at": _to_db(record.last_active_at),
            "archived_at": _to_db(record.archived_at),
            "version": 1,  # a new row
        }
        params = [f.db_value(values[f.name]) for f in self._fields]
        params.append(int(record.version))
        cursor = self.db.execute_sql(self._upsert, params)  # one statement: its own transaction
        if cursor.rowcount == 0:
            raise ConflictError(
                f"session {record.session_id!r} was saved by someone else since it was read "
                f"(stored version is not {record.version})"
            )
        record.version += 1

    def list(
        self,
        *,
        profile_name: str | None = None,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> Page[SessionRecord]:
        Session = self.m["Session"]
        query = Session.select()
        if profile_name:
            query = query.where(Session.profile_name == profile_name)
        if status:
            query = query.where(Session.status == status)
        total = query.count()
        rows = query.order_by(Session.last_active_at.desc()).limit(limit).offset(offset)
        return Page([self._record(r) for r in rows], total, limit, offset)

    def archive(self, session_id: str) -> bool:
        Session = self.m["Session"]
        with write_transaction(self.db):
            changed = (
                Session.update(
                    status="archived",
                    archived_at=_to_db(utcnow()),
                    version=Session.version + 1,  # a turn saving an older read must merge
                )
                .where(Session.session_id == session_id)
                .execute()
            )
        return bool(changed)


class PeeweeAuditStore(_Store):
    """Audit rows map one-to-one onto the record dataclasses; only JSON and times convert."""

    def __init__(self, db: pw.Database, models: dict[str, type[pw.Model]]):
        super().__init__(db, models)
        self._statements: dict[tuple[str, tuple[str, ...]], str] = {}
        self._returning = isinstance(db, pw.PostgresqlDatabase)

    def _insert(self, model: Any, values: dict[str, Any]) -> int:
        """Insert one row with a prepared statement (cached per table and column set).

        Audit rows are written on every model and tool call, on the turn's critical path:
        building the statement through the ORM each time cost ~3x the insert itself.
        Values still go through each field's ``db_value`` so every database gets its types.
        """
        values.pop("id", None)
        values["created_at"] = _to_db(values["created_at"])
        columns = tuple(values)
        key = (model._meta.table_name, columns)
        sql = self._statements.get(key)
        if sql is None:
            marks = ", ".join([self.db.param] * len(columns))
            sql = f"INSERT INTO {model._meta.table_name} ({', '.join(columns)}) VALUES ({marks})"
            if self._returning:
                sql += " RETURNING id"
            self._statements[key] = sql
        params = [model._meta.fields[name].db_value(values[name]) for name in columns]
        # One statement is its own (autocommit) transaction: no BEGIN/COMMIT round trips,
        # each of which releases and re-takes the GIL on the turn's critical path.
        cursor = self.db.execute_sql(sql, params)
        return int(cursor.fetchone()[0] if self._returning else cursor.lastrowid)

    def record_tool_invocation(self, record: ToolInvocationRecord) -> int:
        values = _fields_of(record)
        values["input_json"] = json.dumps(values.pop("input"), ensure_ascii=False, default=str)
        values["result_json"] = values.pop("result")
        record.id = self._insert(self.m["ToolInvocation"], values)
        return record.id

    def record_llm_call(self, record: LlmCallRecord) -> int:
        values = _fields_of(record)
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            values[key] = int(values[key] or 0)  # providers may report no usage
        record.id = self._insert(self.m["LlmCall"], values)
        return record.id

    def _page(self, model: Any, query: AuditQuery, to_record: Any) -> Page[Any]:
        select = model.select()
        if query.session_id:
            select = select.where(model.session_id == query.session_id)
        if query.agent:
            select = select.where(model.agent == query.agent)
        if query.tool_name and hasattr(model, "tool_name"):
            select = select.where(model.tool_name == query.tool_name)
        if query.provider and hasattr(model, "provider"):
            select = select.where(model.provider == query.provider)
        if query.success is not None:
            select = select.where(model.success == query.success)
        if query.since:
            select = select.where(model.created_at >= _to_db(query.since))
        if query.until:
            select = select.where(model.created_at < _to_db(query.until))
        total = select.count()
        rows = select.order_by(model.id.desc()).limit(query.limit).offset(query.offset).dicts()
        return Page([to_record(row) for row in rows], total, query.limit, query.offset)

    def tool_invocations(self, query: AuditQuery) -> Page[ToolInvocationRecord]:
        def to_record(row: dict[str, Any]) -> ToolInvocationRecord:
            row["input"] = json.loads(row.pop("input_json"))
            row["result"] = row.pop("result_json")
            row["success"] = bool(row["success"])
            row["created_at"] = _from_db(row["created_at"])
            return ToolInvocationRecord(**row)

        return self._page(self.m["ToolInvocation"], query, to_record)

    def llm_calls(self, query: AuditQuery) -> Page[LlmCallRecord]:
        def to_record(row: dict[str, Any]) -> LlmCallRecord:
            row["success"] = bool(row["success"])
            row["created_at"] = _from_db(row["created_at"])
            return LlmCallRecord(**row)

        return self._page(self.m["LlmCall"], query, to_record)

    def prune(self, before: datetime) -> dict[str, int]:
        cut = _to_db(before)
        return {
            "tool_invocations": self._delete_before(self.m["ToolInvocation"], cut),
            "llm_calls": self._delete_before(self.m["LlmCall"], cut),
        }

    def _delete_before(self, model: Any, cut: Any) -> int:
        """Delete rows older than ``cut``, PRUNE_BATCH at a time (each statement is its own
        short transaction, so audit writes of running turns get the lock in between)."""
        deleted = 0
        while True:
            batch = model.select(model.id).where(model.created_at < cut).limit(PRUNE_BATCH)
            count = model.delete().where(model.id.in_(batch)).execute()
            deleted += count
            if count < PRUNE_BATCH:
                return deleted


class PeeweeWhitelistStore(_Store):
    def _bump(self) -> None:
        Meta = self.m["Meta"]
        Meta.update(value=Meta.value + 1).where(Meta.key == "whitelist_version").execute()

    @staticmethod
    def _check_kind(kind: str) -> str:
        kind = kind.lower()
        if kind not in WHITELIST_KINDS:
            raise UsageError(
                f"unknown whitelist kind {kind!r}; expected one of: {', '.join(WHITELIST_KINDS)}"
            )
        return kind

    def list(self, kind: str | None = None) -> list[WhitelistEntry]:
        model = self.m["Whitelist"]
        query = model.select().order_by(model.kind, model.id)
        if kind:
            query = query.where(model.kind == self._check_kind(kind))
        return [
            WhitelistEntry(r.kind, r.value, r.note, r.id, _from_db(r.created_at))  # type: ignore[arg-type]
            for r in query
        ]

    def add(self, kind: str, value: str, note: str | None = None) -> WhitelistEntry:
        kind = self._check_kind(kind)
        if not value or not value.strip():
            raise UsageError("a whitelist entry needs a non-empty value")
        entry = WhitelistEntry(kind, value.strip(), note)
        model = self.m["Whitelist"]
        try:
            with write_transaction(self.db):
                entry.id = model.insert(
                    kind=kind, value=entry.value, note=note, created_at=_to_db(entry.created_at)
                ).execute()
                self._bump()
        except pw.IntegrityError:
            raise ConflictError(f"{kind} whitelist already has {entry.value!r}") from None
        return entry

    def remove(self, kind: str, value: str) -> bool:
        kind = self._check_kind(kind)
        model = self.m["Whitelist"]
        with write_transaction(self.db):
            removed = model.delete().where((model.kind == kind) & (model.value == value)).execute()
            if removed:
                self._bump()
        return bool(removed)

    def version(self) -> int:
        Meta = self.m["Meta"]
        row = Meta.get_or_none(Meta.key == "whitelist_version")
        return int(row.value) if row is not None else 0


class PeeweeNotifyChannelStore(_Store):
    FIELDS = ("type", "url", "secret", "description")

    def _record(self, r: Any) -> NotifyChannelRecord:
        return NotifyChannelRecord(
            name=r.name,
            type=r.type,
            url=r.url,
            secret=r.secret,
            description=r.description,
            created_at=_from_db(r.created_at),  # type: ignore[arg-type]
            updated_at=_from_db(r.updated_at),  # type: ignore[arg-type]
        )

    def list(self) -> list[NotifyChannelRecord]:
        model = self.m["NotifyChannel"]
        return [self._record(r) for r in model.select().order_by(model.name)]

    def get(self, name: str) -> NotifyChannelRecord | None:
        model = self.m["NotifyChannel"]
        row = model.get_or_none(model.name == name)
        return self._record(row) if row is not None else None

    def create(self, record: NotifyChannelRecord) -> NotifyChannelRecord:
        model = self.m["NotifyChannel"]
        try:
            with write_transaction(self.db):
                model.insert(
                    name=record.name,
                    type=record.type,
                    url=record.url,
                    secret=record.secret,
                    description=record.description,
                    created_at=_to_db(record.created_at),
                    updated_at=_to_db(record.updated_at),
                ).execute()
        except pw.IntegrityError:
            raise ConflictError(f"a notify channel named {record.name!r} already exists") from None
        return record

    def update(self, name: str, /, **changes: Any) -> NotifyChannelRecord:
        unknown = set(changes) - set(self.FIELDS)
        if unknown:
            raise UsageError(f"cannot change {', '.join(sorted(unknown))} of a notify channel")
        model = self.m["NotifyChannel"]
        with write_transaction(self.db):
            changed = (
                model.update(**changes, updated_at=_to_db(utcnow()))
                .where(model.name == name)
                .execute()
            )
        if not changed:
            raise NotFoundError(f"no notify channel named {name!r}")
        record = self.get(name)
        assert record is not None
        return record

    def delete(self, name: str) -> bool:
        model = self.m["NotifyChannel"]
        with write_transaction(self.db):
            return bool(model.delete().where(model.name == name).execute())


class PeeweeStorage:
    """The kernel's Storage on a peewee database."""

    TABLES = ("sessions", "tool_invocations", "llm_calls", "notify_channels", "sandbox_whitelist")

    def __init__(self, db: pw.Database, url: str):
        self.db = db
        self.url = url
        models = make_models(db)
        self.sessions = PeeweeSessionStore(db, models)
        self.audit = PeeweeAuditStore(db, models)
        self.whitelist = PeeweeWhitelistStore(db, models)
        self.notify_channels = PeeweeNotifyChannelStore(db, models)
        self._lock = threading.Lock()

    @classmethod
    def open(cls, url: str, workspace: Workspace) -> PeeweeStorage:
        """Connect (creating an SQLite file's directory) and migrate to the latest schema."""
        db = connect(url, workspace)
        storage = cls(db, url)
        try:
            migrate(db)
        except pw.OperationalError as err:
            raise StorageError(f"cannot migrate the database at {url}: {err}") from err
        return storage

    def schema_version(self) -> int:
        return current_version(self.db)

    def counts(self) -> dict[str, int]:
        out = {}
        for table in self.TABLES:
            out[table] = int(self.db.execute_sql(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        return out

    def check(self) -> None:
        try:
            self.db.execute_sql("SELECT 1").fetchone()
        except pw.PeeweeException as err:
            raise StorageError(f"database check failed: {err}") from err

    def close(self) -> None:
        if not self.db.is_closed():
            self.db.close()


def sqlite_path(url: str, workspace: Workspace) -> str:
    """The file of an ``sqlite:///`` URL; a relative path is taken from the project dir."""
    path = url[len(SQLITE_PREFIX) :]
    if path in ("", ":memory:"):
        return ":memory:"
    return str(workspace.resolve(Path(path)))


def connect(url: str, workspace: Workspace) -> pw.Database:
    """A peewee database for ``url`` (sqlite:///path, postgresql://..., mysql://...)."""
    if url.startswith(SQLITE_PREFIX):
        path = sqlite_path(url, workspace)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return pw.SqliteDatabase(path, pragmas=SQLITE_PRAGMAS, timeout=30)
    from playhouse.db_url import connect as url_connect

    try:
        return url_connect(url)
    except (ValueError, RuntimeError, pw.ImproperlyConfigured) as err:
        raise StorageError(f"unsupported storage url {url!r}: {err}") from err
