"""Built-in memory plugin: MEMORY.md as long-term memory, the ``save_memory`` and
``recall_memory`` tools, and ``oryxos memory show|search|clear``.

The back-end is registered as ``markdown`` (``memory.backend`` in config.yaml, the default).
The tools work on whatever back-end ``runtime.memory`` is, so another memory plugin can replace
the file without replacing the tools. Importing this module loads nothing but the kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oryxos import hookimpl

if TYPE_CHECKING:
    from oryxos.runtime import Runtime

BACKEND_NAME = "markdown"


def open_memory(runtime: Runtime) -> Any:
    """The factory registered as ``markdown``: MEMORY.md in the workspace's memory folder."""
    from oryxos_memory.store import MarkdownMemory

    return MarkdownMemory(
        runtime.workspace.memory_dir, max_entry_chars=runtime.config.memory.max_prompt_chars
    )


@hookimpl
def oryxos_register_memory(register: Any) -> None:
    register(BACKEND_NAME, open_memory)


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    from oryxos_memory.tools import RecallMemoryTool, SaveMemoryTool

    catalog.register(SaveMemoryTool(), groups=["memory"])
    catalog.register(RecallMemoryTool(), groups=["memory"])


@hookimpl
def oryxos_register_commands(cli: Any) -> None:
    from oryxos_memory.cli import memory

    cli.add_command(memory)
