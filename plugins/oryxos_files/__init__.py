"""Built-in file tools: read, write, edit, append, list, glob, grep, make_dir, move, copy, delete.

Every path argument is declared in the tool's ``sandbox_args``, so the executor checks it
against the file whitelist and hands the tool the checked real path; the tools check again
through ``ctx.runtime.sandbox`` (cheap, and it keeps them safe if called directly), and the
tools that walk directories (glob, grep) check what they find.
"""

from __future__ import annotations

from typing import Any

from oryxos import hookimpl

#: Groups: "files" has every tool; "files:read" only those that never change anything.
READ_GROUPS = ("files", "files:read")
WRITE_GROUPS = ("files", "files:write")


@hookimpl
def oryxos_register_tools(catalog: Any, config: Any) -> None:
    from oryxos_files.tools import READ_TOOLS, WRITE_TOOLS

    for tool_class in READ_TOOLS:
        catalog.register(tool_class(), groups=READ_GROUPS)
    for tool_class in WRITE_TOOLS:
        catalog.register(tool_class(), groups=WRITE_GROUPS)
