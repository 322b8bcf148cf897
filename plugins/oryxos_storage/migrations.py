"""Versioned, hand-written schema migrations (no automatic ALTER).

Each migration is a version number, a description and the SQL it runs. ``{pk}`` stands for the
auto-incrementing primary-key column type of the database at hand. A database newer than this
code is refused rather than touched. Migrations run in an IMMEDIATE transaction, so two
processes starting at once do not both apply them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from oryxos.errors import StorageError

MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "sessions, audit tables, notify channels, sandbox whitelist",
        [
            """CREATE TABLE sessions (
                session_id VARCHAR(255) NOT NULL PRIMARY KEY,
                profile_name VARCHAR(255) NOT NULL,
                channel VARCHAR(64) NOT NULL,
                user_id VARCHAR(255) NOT NULL,
                messages_json TEXT NOT NULL,
                status VARCHAR(16) NOT NULL,
                created_at TIMESTAMP NOT NULL,
                last_active_at TIMESTAMP NOT NULL,
                archived_at TIMESTAMP
            )""",
            "CREATE INDEX sessions_profile_name ON sessions (profile_name)",
            "CREATE INDEX sessions_status_last_active ON sessions (status, last_active_at)",
            """CREATE TABLE tool_invocations (
                id {pk},
                session_id VARCHAR(255),
                agent VARCHAR(255),
                channel VARCHAR(64),
                tool_name VARCHAR(255) NOT NULL,
                input_json TEXT NOT NULL,
                result_json TEXT,
                success BOOLEAN NOT NULL,
                error_message TEXT,
                duration_ms BIGINT NOT NULL,
                created_at TIMESTAMP NOT NULL
            )""",
            "CREATE INDEX tool_invocations_session ON tool_invocations (session_id)",
            "CREATE INDEX tool_invocations_created ON tool_invocations (created_at)",
            "CREATE INDEX tool_invocations_tool ON tool_invocations (tool_name)",
            """CREATE TABLE llm_calls (
                id {pk},
                session_id VARCHAR(255),
                agent VARCHAR(255),
                provider VARCHAR(255) NOT NULL,
                model VARCHAR(255) NOT NULL,
                prompt_tokens INTEGER NOT NULL,
                completion_tokens INTEGER NOT NULL,
                total_tokens INTEGER NOT NULL,
                duration_ms BIGINT NOT NULL,
                success BOOLEAN NOT NULL,
                error_message TEXT,
                attempt INTEGER NOT NULL,
                created_at TIMESTAMP NOT NULL
            )""",
            "CREATE INDEX llm_calls_session ON llm_calls (session_id)",
            "CREATE INDEX llm_calls_created ON llm_calls (created_at)",
            """CREATE TABLE notify_channels (
                id {pk},
                name VARCHAR(64) NOT NULL UNIQUE,
                type VARCHAR(64) NOT NULL,
                url TEXT NOT NULL,
                secret TEXT,
                description TEXT,
                created_at TIMESTAMP NOT NULL,
                updated_at TIMESTAMP NOT NULL
            )""",
            """CREATE TABLE sandbox_whitelist (
                id {pk},
                kind VARCHAR(16) NOT NULL,
                value TEXT NOT NULL,
                note TEXT,
                created_at TIMESTAMP NOT NULL,
                UNIQUE (kind, value)
            )""",
            """CREATE TABLE oryxos_meta (
                key VARCHAR(64) NOT NULL PRIMARY KEY,
                value BIGINT NOT NULL
            )""",
            "INSERT INTO oryxos_meta (key, value) VALUES ('whitelist_version', 0)",
        ],
    ),
    (
        2,
        "sessions.version: a save checks that nobody saved the session in between",
        [
            "ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
            "UPDATE sessions SET version = 1",  # 0 means "not stored yet"
        ],
    ),
]

LATEST = MIGRATIONS[-1][0]


def _pk_type(db: Any) -> str:
    from peewee import PostgresqlDatabase, SqliteDatabase

    if isinstance(db, SqliteDatabase):
        return "INTEGER PRIMARY KEY AUTOINCREMENT"
    if isinstance(db, PostgresqlDatabase):
        return "BIGSERIAL PRIMARY KEY"
    return "BIGINT AUTO_INCREMENT PRIMARY KEY"  # MySQL


def write_transaction(db: Any) -> Any:
    """A write transaction that takes the write lock at once (IMMEDIATE on SQLite).

    A deferred SQLite transaction that reads before it writes fails with "database is locked"
    under concurrent writers; IMMEDIATE waits for the lock instead.
    """
    from peewee import SqliteDatabase

    return db.atomic("IMMEDIATE") if isinstance(db, SqliteDatabase) else db.atomic()


def current_version(db: Any) -> int:
    if "schema_version" not in db.get_tables():
        return 0
    row = db.execute_sql("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(db: Any) -> int:
    """Bring the schema to :data:`LATEST`; return the version now in place."""
    with write_transaction(db):
        db.execute_sql(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER NOT NULL PRIMARY KEY, description TEXT NOT NULL, "
            "applied_at TIMESTAMP NOT NULL)"
        )
    version = current_version(db)
    if version > LATEST:
        raise StorageError(
            f"the database schema is version {version}, newer than this OryxOS knows "
            f"({LATEST}); upgrade OryxOS instead of using an older one"
        )
    pk = _pk_type(db)
    for number, description, statements in MIGRATIONS:
        with write_transaction(db):
            if current_version(db) >= number:  # another process got there first
                continue
            for statement in statements:
                db.execute_sql(statement.replace("{pk}", pk))
            db.execute_sql(
                "INSERT INTO schema_version (version, description, applied_at) "
                "VALUES (%s, %s, %s)".replace("%s", db.param),
                (number, description, datetime.now(UTC).replace(tzinfo=None)),
            )
    return current_version(db)
