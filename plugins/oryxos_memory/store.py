"""MEMORY.md: the long-term memory file, one dated Markdown section per entry.

The file is written only by :meth:`MarkdownMemory.save` and :meth:`MarkdownMemory.clear`, each
under an exclusive file lock (``filelock``: threads and processes alike) and by replacing the
whole file atomically (temporary file in the same directory, fsync, ``os.replace``, fsync of
the directory): a reader sees the old file or the new one, and a crash at any point leaves one
of them, never a torn mix. USER.md is the person's own file and nothing here touches it.

Format (readable and editable by hand)::

    # Memory

    ## 2026-11-30T06:04:43Z · weather-bot
    The user prefers Celsius.

A text line that would read as an entry heading is stored with a leading backslash.
"""

from __future__ import annotations

import itertools
import math
import os
import re
import tempfile
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from oryxos.errors import OryxError, UsageError
from oryxos.memory import MemoryEntry

FILENAME = "MEMORY.md"
HEADER = (
    "# Memory\n\n"
    "<!-- Long-term memory of OryxOS agents, written by the save_memory tool. "
    "One '## <UTC time>' section per entry. -->\n"
)
ENTRY_RE = re.compile(r"^## (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)(?: · (.*))?$")
_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
LOCK_TIMEOUT_SECONDS = 30.0
MAX_SEARCH_RESULTS = 20


class MemoryFileError(OryxError):
    """The memory file cannot be read or written."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _escape(text: str) -> str:
    lines = text.split("\n")
    return "\n".join("\\" + ln if ENTRY_RE.match(ln.lstrip("\\")) else ln for ln in lines)


def _unescape(text: str) -> str:
    return "\n".join(
        ln[1:] if ln.startswith("\\") and ENTRY_RE.match(ln.lstrip("\\")) else ln
        for ln in text.split("\n")
    )


def parse(text: str) -> list[tuple[MemoryEntry, str | None]]:
    """Entries of a MEMORY.md text, oldest first, with the agent named in each heading."""
    entries: list[tuple[MemoryEntry, str | None]] = []
    current: tuple[str, str | None] | None = None
    lines: list[str] = []

    def flush() -> None:
        if current is not None:
            body = _unescape("\n".join(lines).strip("\n"))
            entries.append((MemoryEntry(current[0], body), current[1]))

    for line in text.splitlines():
        match = ENTRY_RE.match(line)
        if match:
            flush()
            current, lines = (match.group(1), match.group(2) or None), []
        elif current is not None:
            lines.append(line)
    flush()
    return entries


def render_entry(saved_at: str, text: str, agent: str | None) -> str:
    """One entry as it is stored: heading, text, blank line."""
    who = f" · {agent}" if agent else ""
    return f"\n## {saved_at}{who}\n{_escape(text)}\n"


def tokens(text: str) -> list[str]:
    """Search terms: lower-case words; runs of CJK characters become overlapping bigrams."""
    out: list[str] = []
    for word in _TOKEN_RE.findall(text.lower()):
        if _CJK_RE.search(word):
            chars = list(word)
            out.extend(chars if len(chars) < 2 else [a + b for a, b in itertools.pairwise(chars)])
        else:
            out.append(word)
    return out


class MarkdownMemory:
    """The ``markdown`` memory back-end: ``.oryxos/memory/MEMORY.md``."""

    def __init__(self, directory: Path, *, max_entry_chars: int = 4000):
        self.directory = Path(directory)
        self.path = self.directory / FILENAME
        self.lock_path = self.directory / f".{FILENAME}.lock"
        self.max_entry_chars = max_entry_chars
        # FileLock excludes other processes and, because each call opens its own lock file
        # descriptor, other threads too; the thread lock only saves those threads the polling.
        self._thread_lock = threading.Lock()

    # Writing ---------------------------------------------------------------------------------

    def save(self, text: str, *, agent: str | None = None) -> MemoryEntry:
        """Append one dated entry (atomically, under the lock)."""
        text = text.strip()
        if not text:
            raise UsageError("text: a memory entry may not be empty")
        if len(text) > self.max_entry_chars:
            raise UsageError(
                f"text: a memory entry is at most {self.max_entry_chars} characters "
                f"(got {len(text)}); save a shorter summary"
            )
        agent = " ".join(agent.split()) if agent else None
        with self._locked():
            saved_at = _now()
            self._replace(lambda old: (old or HEADER) + render_entry(saved_at, text, agent))
        return MemoryEntry(saved_at, text)

    def clear(self) -> Path | None:
        """Empty the memory, keeping the old file as ``MEMORY.md.bak-<time>``; return that path."""
        with self._locked():
            if not self.path.exists():
                return None
            stamp = _now().replace(":", "")
            backup = self.directory / f"{FILENAME}.bak-{stamp}"
            n = 1
            while backup.exists():
                n += 1
                backup = self.directory / f"{FILENAME}.bak-{stamp}-{n}"
            os.link(self.path, backup)  # the old inode survives the replace below
            self._replace(lambda old: HEADER)
            return backup

    def _locked(self):  # type: ignore[no-untyped-def]
        from contextlib import ExitStack

        from filelock import FileLock, Timeout

        self.directory.mkdir(parents=True, exist_ok=True)
        stack = ExitStack()
        stack.enter_context(self._thread_lock)
        try:
            stack.enter_context(FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_SECONDS))
        except Timeout:
            stack.close()
            raise MemoryFileError(
                f"{self.path}: another process has held the memory lock for more than "
                f"{LOCK_TIMEOUT_SECONDS:.0f} s ({self.lock_path})"
            ) from None
        return stack

    def _replace(self, change: Callable[[str | None], str]) -> None:
        """Write ``change(old text)`` to a temporary file, fsync it and rename it over the file."""
        try:
            old = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            old = None
        new = change(old)
        fd, tmp = tempfile.mkstemp(prefix=f".{FILENAME}.", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(new)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dir_fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)  # make the rename itself durable
        finally:
            os.close(dir_fd)

    # Reading ---------------------------------------------------------------------------------

    def text(self) -> str:
        """The whole file ("" when nothing was saved yet)."""
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError) as err:
            raise MemoryFileError(f"{self.path}: cannot read the memory file: {err}") from err

    def entries(self) -> list[MemoryEntry]:
        """Every entry, oldest first."""
        return [entry for entry, _agent in parse(self.text())]

    def search(self, query: str, *, limit: int = 5) -> list[MemoryEntry]:
        """Entries containing the query's terms, best first (ties: newest first), at most 20.

        The score is a TF-IDF sum over the query terms found in the entry (substring match, so
        "deploy" finds "deployment"); a term found in every entry counts little.
        """
        terms = sorted(set(tokens(query)))
        limit = max(1, min(int(limit), MAX_SEARCH_RESULTS))
        entries = self.entries()
        if not terms or not entries:
            return []
        lowered = [entry.text.lower() for entry in entries]
        df = {term: sum(1 for text in lowered if term in text) for term in terms}
        scored: list[tuple[float, int, MemoryEntry]] = []
        for index, (entry, text) in enumerate(zip(entries, lowered, strict=True)):
            score = 0.0
            for term in terms:
                count = text.count(term)
                if count:
                    idf = math.log(1 + len(entries) / df[term])
                    score += (1 + math.log(count)) * idf
            if score > 0:
                scored.append((score, index, entry))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [
            MemoryEntry(entry.saved_at, entry.text, round(score, 4))
            for score, _i, entry in scored[:limit]
        ]

    def for_prompt(self, max_chars: int) -> str:
        """The newest entries that fit in ``max_chars``, whole, oldest of them first.

        When even the newest entry alone is too long it is cut (with a mark) so that the most
        recent memory is never silently dropped.
        """
        entries = self.entries()
        if not entries or max_chars <= 0:
            return ""
        blocks: list[str] = []
        used = 0
        for entry in reversed(entries):
            block = f"[{entry.saved_at}] {entry.text}"
            cost = len(block) + (1 if blocks else 0)
            if used + cost > max_chars:
                break
            blocks.append(block)
            used += cost
        if not blocks:
            newest = entries[-1]
            block = f"[{newest.saved_at}] {newest.text}"
            return block[: max(0, max_chars - 1)] + "…"
        omitted = len(entries) - len(blocks)
        # Say that older entries exist; make room for the note by dropping the oldest kept
        # entries if needed (the newest one stays).
        while omitted:
            note = f"({omitted} older memory entries not shown)"
            if used + len(note) + 1 <= max_chars:
                blocks.append(note)
                break
            if len(blocks) == 1:
                break
            used -= len(blocks.pop()) + 1
            omitted += 1
        return "\n".join(reversed(blocks))
