"""Built-in storage plugin: the kernel's storage interface on peewee (SQLite by default).

Importing this module is free: peewee is imported only when a database is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oryxos import hookimpl

if TYPE_CHECKING:
    from oryxos.workspace import Workspace

BACKEND_NAME = "peewee"


def open_storage(url: str, workspace: Workspace) -> Any:
    """Connect to ``url`` and migrate the schema (the factory registered as ``peewee``)."""
    from oryxos_storage.backend import PeeweeStorage

    return PeeweeStorage.open(url, workspace)


@hookimpl
def oryxos_register_storage(register: Any) -> None:
    register(BACKEND_NAME, open_storage)
