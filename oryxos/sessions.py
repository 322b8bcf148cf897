"""Sessions: which conversation a message belongs to, its stored history, and per-session locks.

A session is found from channel + user + profile (the CLI's "cli:local:default"), or named
explicitly. Its whole history (OpenAI-format messages) is stored as JSON in the ``sessions``
table after every turn, so a conversation continues after a restart; the prompt builder decides
how much of it the model sees. Turns on one session are serialised by a lock held for the whole
turn; turns on different sessions run in parallel.

The locks are per process. Across processes (``oryxos chat`` while ``oryxos serve`` runs, two
API servers on one database) every save is checked against the version the turn read: when
another process saved the session in between, the turn's new messages are appended to what is
stored now (see :meth:`SessionManager.save`). Nothing is lost; the two turns simply did not
see each other's messages.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from oryxos.errors import ConflictError, NotFoundError, UsageError
from oryxos.storage import SessionRecord, utcnow

if TYPE_CHECKING:
    from oryxos.runtime import Runtime
    from oryxos.storage import SessionStore

log = logging.getLogger("oryxos.sessions")

#: How often a save that lost a race with another process is merged and tried again.
MERGE_TRIES = 5

_ID_RE = re.compile(r"^[A-Za-z0-9_.:@-]{1,128}$")


def derive_session_id(channel: str, user: str, profile: str) -> str:
    """The default session id of a person talking to an agent through a channel."""
    return f"{channel}:{user}:{profile}"


def check_session_id(session_id: str) -> str:
    """A usable session id (letters, digits and ``_ . : @ -``, at most 128) or a UsageError."""
    if not _ID_RE.match(session_id or ""):
        raise UsageError(
            f"invalid session id {session_id!r}: use 1-128 letters, digits or _ . : @ -"
        )
    return session_id


class SessionManager:
    """Opens, saves and locks sessions of one runtime (``runtime.sessions``)."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @property
    def store(self) -> SessionStore:
        return self.runtime.storage.sessions

    def lock(self, session_id: str) -> threading.Lock:
        """The lock that serialises turns on ``session_id`` in this process."""
        with self._locks_guard:
            lock = self._locks.get(session_id)
            if lock is None:
                lock = self._locks[session_id] = threading.Lock()
            return lock

    @contextmanager
    def locked(self, session_id: str) -> Iterator[None]:
        with self.lock(session_id):
            yield

    def get(self, session_id: str) -> SessionRecord:
        record = self.store.get(session_id)
        if record is None:
            raise NotFoundError(f"no session {session_id!r} (see 'oryxos session list')")
        return record

    def open(
        self,
        profile: str,
        *,
        channel: str = "cli",
        user: str = "local",
        session_id: str | None = None,
    ) -> SessionRecord:
        """The session to continue, or a new one (not stored until its first turn is saved).

        With an explicit id: that session (it must belong to ``profile`` and be active) or a
        new one with that id. Without: the most recent active session of this channel, user
        and profile, else a new one with the derived id (plus a suffix if that id is taken by
        an archived session).
        """
        if session_id is not None:
            return self.load(session_id, profile, channel=channel, user=user)
        for record in self.store.list(profile_name=profile, status="active", limit=200).items:
            if record.channel == channel and record.user_id == user:
                return record
        return self.new(profile, channel=channel, user=user)

    def load(
        self, session_id: str, profile: str, *, channel: str = "cli", user: str = "local"
    ) -> SessionRecord:
        """Session ``session_id`` as stored (checked to be ``profile``'s and active), or new."""
        check_session_id(session_id)
        record = self.store.get(session_id)
        if record is None:
            return SessionRecord(session_id, profile, channel=channel, user_id=user)
        if record.profile_name != profile:
            raise ConflictError(
                f"session {session_id!r} belongs to agent {record.profile_name!r}, not {profile!r}"
            )
        if record.status != "active":
            raise ConflictError(f"session {session_id!r} is archived")
        return record

    def new(self, profile: str, *, channel: str = "cli", user: str = "local") -> SessionRecord:
        """A fresh session with the derived id, or the derived id plus a short random suffix."""
        session_id = derive_session_id(channel, user, profile)
        if self.store.get(session_id) is not None:
            session_id = f"{session_id}:{uuid.uuid4().hex[:8]}"
        return SessionRecord(session_id, profile, channel=channel, user_id=user)

    def save(self, record: SessionRecord, *, new_from: int | None = None) -> None:
        """Store ``record``; if another process saved it since it was read, merge.

        ``new_from`` is the index of the first message this process added (a turn's user
        message). On a conflict those messages are appended to the stored history and saved
        again (a few tries), and ``record`` becomes what was stored; without ``new_from``
        nothing can be merged and the ConflictError is raised.
        """
        record.last_active_at = utcnow()
        for _ in range(MERGE_TRIES):
            try:
                self.store.save(record)
                return
            except ConflictError:
                if new_from is None:
                    raise
                current = self.store.get(record.session_id)
                added = record.messages[new_from:]
                if current is None:  # deleted meanwhile: store this record as a new row
                    record.version = 0
                    continue
                log.warning(
                    "session %s was saved by another process during this turn; "
                    "appending this turn's %d messages to the stored history",
                    record.session_id,
                    len(added),
                )
                new_from = len(current.messages)
                current.messages.extend(added)
                current.last_active_at = record.last_active_at
                record.messages, record.version = current.messages, current.version
                record.status, record.archived_at = current.status, current.archived_at
        raise ConflictError(
            f"session {record.session_id!r} keeps being saved by other processes; "
            f"this turn's messages could not be stored after {MERGE_TRIES} tries"
        )

    def archive(self, session_id: str) -> bool:
        return self.store.archive(session_id)
