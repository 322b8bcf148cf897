"""The long-term memory interface (MEMORY.md by default, through the memory plugin).

A memory back-end is registered with ``oryxos_register_memory`` as ``register(name,
factory)``; ``factory(runtime)`` returns an object implementing :class:`Memory`, and
``memory.backend`` in config.yaml chooses one by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class MemoryEntry:
    """One remembered item: when it was saved and its text."""

    saved_at: str
    text: str
    score: float = 0.0


@runtime_checkable
class Memory(Protocol):
    def save(self, text: str, *, agent: str | None = None) -> MemoryEntry:
        """Append one dated entry, atomically and safely under concurrent writers."""

    def search(self, query: str, *, limit: int = 5) -> list[MemoryEntry]:
        """Entries matching the query's keywords, best first."""

    def for_prompt(self, max_chars: int) -> str:
        """The memory text for the system prompt, at most ``max_chars``, newest entries kept."""

    def entries(self) -> list[MemoryEntry]:
        """Every entry, oldest first."""
