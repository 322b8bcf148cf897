"""Named registries that plugins fill through registration hooks.

A registry knows which plugin is registering (the plugin manager sets ``current_plugin``
around each implementation), so a duplicate name is a StartupError naming both plugins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from oryxos.errors import NotFoundError, StartupError

T = TypeVar("T")


class Registry(Generic[T]):
    """``name → object``; call it (or :meth:`register`) to add an entry."""

    def __init__(self, kind: str, validate: Callable[[str, T], None] | None = None):
        self.kind = kind
        self.current_plugin: str | None = None
        self._items: dict[str, T] = {}
        self._owners: dict[str, str] = {}
        self._validate = validate

    def register(self, name: str, obj: T) -> T:
        """Add ``obj`` under ``name``; a clash or an invalid entry raises StartupError."""
        plugin = self.current_plugin or "<unknown plugin>"
        if not isinstance(name, str) or not name:
            raise StartupError(f"plugin {plugin}: a {self.kind} needs a non-empty string name")
        if name in self._items:
            raise StartupError(
                f"{self.kind} {name!r} is registered twice: by plugin {self._owners[name]} "
                f"and by plugin {plugin}"
            )
        if self._validate is not None:
            try:
                self._validate(name, obj)
            except (TypeError, ValueError) as err:
                raise StartupError(f"plugin {plugin}: {self.kind} {name!r}: {err}") from err
        self._items[name] = obj
        self._owners[name] = plugin
        return obj

    __call__ = register

    def get(self, name: str) -> T:
        """The entry called ``name``, or a NotFoundError listing the known names."""
        try:
            return self._items[name]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none registered"
            raise NotFoundError(f"unknown {self.kind} {name!r} (known: {known})") from None

    def owner(self, name: str) -> str:
        """The plugin that registered ``name``."""
        return self._owners[name]

    def names(self) -> list[str]:
        return sorted(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._items)
