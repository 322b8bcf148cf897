"""The peewee storage plugin on real SQLite files: stores, migrations, concurrency."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime, timedelta

import pytest
from oryxos_storage import open_storage
from oryxos_storage.migrations import LATEST

from oryxos.errors import ConflictError, NotFoundError, StorageError, UsageError
from oryxos.storage import (
    AuditQuery,
    LlmCallRecord,
    NotifyChannelRecord,
    SessionRecord,
    ToolInvocationRecord,
)
from oryxos.workspace import Workspace


@pytest.fixture
def storage(tmp_path):
    store = open_storage("sqlite:///.oryxos/oryxos.db", Workspace(tmp_path / ".oryxos"))
    yield store
    store.close()


def test_relative_sqlite_urls_are_taken_from_the_project_dir(tmp_path, monkeypatch):
    monkeypatch.chdir("/")
    store = open_storage("sqlite:///data/db.sqlite", Workspace(tmp_path / ".oryxos"))
    assert (tmp_path / "data/db.sqlite").is_file()
    assert store.db.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute_sql("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    store.close()


def test_migrations_are_recorded_and_idempotent(tmp_path):
    workspace = Workspace(tmp_path / ".oryxos")
    first = open_storage("sqlite:///.oryxos/oryxos.db", workspace)
    assert first.schema_version() == LATEST
    first.close()
    again = open_storage("sqlite:///.oryxos/oryxos.db", workspace)
    rows = again.db.execute_sql("SELECT version FROM schema_version").fetchall()
    assert [r[0] for r in rows] == list(range(1, LATEST + 1))
    again.close()


def test_a_newer_schema_is_refused(storage, tmp_path):
    storage.db.execute_sql(
        "INSERT INTO schema_version VALUES (?, 'from the future', '2030-01-01')", (LATEST + 1,)
    )
    storage.close()
    with pytest.raises(StorageError, match="newer than this OryxOS"):
        open_storage("sqlite:///.oryxos/oryxos.db", Workspace(tmp_path / ".oryxos"))


def test_sessions_round_trip_list_and_archive(storage):
    record = SessionRecord("s1", "default", "cli", "alice", [{"role": "user", "content": "hi"}])
    storage.sessions.save(record)
    record.messages.append({"role": "assistant", "content": "hello"})
    storage.sessions.save(record)
    storage.sessions.save(SessionRecord("s2", "ops", "rest", "bob"))
    got = storage.sessions.get("s1")
    assert got.messages == record.messages and got.user_id == "alice"
    assert got.created_at.tzinfo is not None
    assert storage.sessions.list(profile_name="ops").total == 1
    assert storage.sessions.archive("s1") is True
    assert storage.sessions.archive("nope") is False
    archived = storage.sessions.get("s1")
    assert archived.status == "archived" and archived.archived_at is not None
    page = storage.sessions.list(status="active", limit=1)
    assert [s.session_id for s in page.items] == ["s2"] and page.total == 1


def test_audit_rows_filters_and_pages(storage):
    for i in range(5):
        storage.audit.record_tool_invocation(
            ToolInvocationRecord(
                "read_file",
                {"path": f"/f{i}"},
                success=i % 2 == 0,
                session_id="s1",
                agent="default",
                error_message=None if i % 2 == 0 else "refused",
            )
        )
    storage.audit.record_llm_call(
        LlmCallRecord("ds", "deepseek-chat", True, 12, 10, 5, 15, session_id="s1", agent="a")
    )
    failed = storage.audit.tool_invocations(AuditQuery(success=False))
    assert failed.total == 2 and {r.error_message for r in failed.items} == {"refused"}
    page = storage.audit.tool_invocations(AuditQuery(session_id="s1", limit=2, offset=2))
    assert page.total == 5 and [r.input["path"] for r in page.items] == ["/f2", "/f1"]
    future = datetime.now(UTC) + timedelta(hours=1)
    assert storage.audit.tool_invocations(AuditQuery(since=future)).total == 0
    (call,) = storage.audit.llm_calls(AuditQuery(agent="a")).items
    assert (call.total_tokens, call.model, call.success) == (15, "deepseek-chat", True)
    assert storage.counts()["tool_invocations"] == 5


def test_prune_deletes_only_rows_older_than_the_cut_off_in_batches(storage, monkeypatch):
    from oryxos_storage import backend

    monkeypatch.setattr(backend, "PRUNE_BATCH", 2)  # several batches for five old rows
    now = datetime.now(UTC)
    for days in (40, 35, 31, 30.5, 30.1, 29, 1):
        when = now - timedelta(days=days)
        storage.audit.record_tool_invocation(
            ToolInvocationRecord("read_file", {"days": days}, success=True, created_at=when)
        )
        storage.audit.record_llm_call(
            LlmCallRecord("ds", "m", True, 1, 1, 1, 2, agent=str(days), created_at=when)
        )
    deleted = storage.audit.prune(now - timedelta(days=30))
    assert deleted == {"tool_invocations": 5, "llm_calls": 5}
    kept = storage.audit.tool_invocations(AuditQuery()).items
    assert [r.input["days"] for r in kept] == [1, 29]
    assert [r.agent for r in storage.audit.llm_calls(AuditQuery()).items] == ["1", "29"]
    assert storage.audit.prune(now - timedelta(days=30)) == {"tool_invocations": 0, "llm_calls": 0}


def test_whitelist_entries_and_version(storage):
    v0 = storage.whitelist.version()
    storage.whitelist.add("HTTP", "api.example.com", note="demo")
    assert storage.whitelist.version() == v0 + 1
    with pytest.raises(ConflictError, match="already has 'api.example.com'"):
        storage.whitelist.add("http", "api.example.com")
    with pytest.raises(UsageError, match="expected one of: file, shell, http"):
        storage.whitelist.add("ftp", "x")
    assert [e.value for e in storage.whitelist.list("http")] == ["api.example.com"]
    assert storage.whitelist.remove("http", "api.example.com") is True
    assert storage.whitelist.remove("http", "api.example.com") is False
    assert storage.whitelist.version() == v0 + 2


def test_notify_channel_crud(storage):
    storage.notify_channels.create(NotifyChannelRecord("team-lark", "feishu", "https://x", "${S}"))
    with pytest.raises(ConflictError):
        storage.notify_channels.create(NotifyChannelRecord("team-lark", "feishu", "https://y"))
    updated = storage.notify_channels.update("team-lark", url="https://z", description="d")
    assert (updated.url, updated.description, updated.secret) == ("https://z", "d", "${S}")
    assert "secret" not in updated.public_dict() and updated.public_dict()["has_secret"]
    with pytest.raises(NotFoundError):
        storage.notify_channels.update("nope", url="https://z")
    with pytest.raises(UsageError):
        storage.notify_channels.update("team-lark", name="renamed")
    assert storage.notify_channels.delete("team-lark") is True
    assert storage.notify_channels.list() == []


def test_eight_threads_writing_audit_rows_lose_none(storage):
    errors = []

    def work(n: int) -> None:
        try:
            for i in range(100):
                storage.audit.record_tool_invocation(
                    ToolInvocationRecord("t", {"n": n, "i": i}, True, session_id=f"s{n}")
                )
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert storage.counts()["tool_invocations"] == 800


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    workspace = Workspace(tmp_path / ".oryxos")
    open_storage("sqlite:///.oryxos/oryxos.db", workspace).close()
    script = textwrap.dedent(
        f"""
        import sys
        from oryxos.storage import ToolInvocationRecord, SessionRecord
        from oryxos.workspace import Workspace
        from oryxos_storage import open_storage
        s = open_storage("sqlite:///.oryxos/oryxos.db", Workspace({str(workspace.path)!r}))
        for i in range(150):
            s.audit.record_tool_invocation(ToolInvocationRecord("t", {{"i": i}}, True))
            s.sessions.save(SessionRecord(sys.argv[1] + str(i), "p"))
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, f"p{n}-"]) for n in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    store = open_storage("sqlite:///.oryxos/oryxos.db", workspace)
    assert store.counts()["tool_invocations"] == 300
    assert store.counts()["sessions"] == 300
    store.close()


def test_unsupported_urls_are_a_clear_error(tmp_path):
    with pytest.raises(StorageError, match="unsupported storage url"):
        open_storage("nosuchdb://x", Workspace(tmp_path / ".oryxos"))


def test_a_session_saved_elsewhere_since_it_was_read_is_not_overwritten(storage, tmp_path):
    first = SessionRecord("s1", "bot", messages=[{"role": "user", "content": "one"}])
    storage.sessions.save(first)
    assert first.version == 1
    # Another process (its own connection) reads and saves the session in between.
    other = open_storage("sqlite:///.oryxos/oryxos.db", Workspace(tmp_path / ".oryxos"))
    theirs = other.sessions.get("s1")
    assert theirs is not None and theirs.version == 1
    theirs.messages.append({"role": "user", "content": "theirs"})
    other.sessions.save(theirs)
    other.close()
    first.messages.append({"role": "user", "content": "mine"})
    with pytest.raises(ConflictError, match="'s1' was saved by someone else"):
        storage.sessions.save(first)
    stored = storage.sessions.get("s1")
    assert [m["content"] for m in stored.messages] == ["one", "theirs"] and stored.version == 2
    # A record made afresh for an id that is already stored is refused too.
    with pytest.raises(ConflictError):
        storage.sessions.save(SessionRecord("s1", "bot"))
    # Archiving counts as a save: a turn that read the session before must not undo it.
    assert storage.sessions.archive("s1")
    stale = stored
    stale.messages.append({"role": "user", "content": "late"})
    with pytest.raises(ConflictError):
        storage.sessions.save(stale)
    assert storage.sessions.get("s1").status == "archived"


def test_sessions_of_a_version_1_database_are_migrated(tmp_path):
    import sqlite3

    from oryxos_storage.migrations import MIGRATIONS

    path = tmp_path / ".oryxos" / "oryxos.db"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE schema_version (version INTEGER NOT NULL PRIMARY KEY, "
        "description TEXT NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    for statement in MIGRATIONS[0][2]:
        db.execute(statement.replace("{pk}", "INTEGER PRIMARY KEY AUTOINCREMENT"))
    db.execute("INSERT INTO schema_version VALUES (1, 'v1', '2026-11-29')")
    db.execute(
        "INSERT INTO sessions VALUES ('old', 'bot', 'cli', 'local', '[{\"role\": \"user\", "
        "\"content\": \"kept\"}]', 'active', '2026-11-29 10:00:00', '2026-11-29 10:00:00', NULL)"
    )
    db.commit()
    db.close()
    store = open_storage("sqlite:///.oryxos/oryxos.db", Workspace(tmp_path / ".oryxos"))
    assert store.schema_version() == LATEST
    old = store.sessions.get("old")
    assert old is not None and old.version == 1 and old.messages[0]["content"] == "kept"
    old.messages.append({"role": "assistant", "content": "still here"})
    store.sessions.save(old)
    assert len(store.sessions.get("old").messages) == 2
    store.close()
