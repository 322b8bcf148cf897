"""``save_memory`` and ``recall_memory``: no sandbox rule (they touch only the memory back-end,
never a path or host the model names), always available to an agent that lists them."""

from __future__ import annotations

from typing import Any

from oryxos.catalog import ToolContext
from oryxos.errors import OryxError
from oryxos.tools import Tool, ToolResult

DEFAULT_RECALL = 5
MAX_RECALL = 20


def _memory(ctx: ToolContext) -> Any:
    runtime = ctx.runtime
    memory = runtime.memory if runtime is not None else None
    if memory is None:
        backend = runtime.config.memory.backend if runtime is not None else "?"
        raise OryxError(
            f"no memory back-end {backend!r} is loaded (memory.backend in config.yaml; "
            "is the memory plugin disabled?)"
        )
    return memory


class SaveMemoryTool(Tool):
    """Append a fact to long-term memory (MEMORY.md), dated and tagged with the agent."""

    name = "save_memory"
    description = "Save a short, self-contained fact (a preference, decision, name) to memory."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "the fact to remember, self-contained"}
        },
        "required": ["text"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            entry = _memory(ctx).save(str(input["text"]), agent=ctx.agent)
        except OryxError as err:
            from oryxos.errors import UsageError

            return ToolResult.fail(str(err), retryable=isinstance(err, UsageError))
        return ToolResult.ok(f"Saved to memory at {entry.saved_at}.")


class RecallMemoryTool(Tool):
    """Keyword search over long-term memory, best matches first."""

    name = "recall_memory"
    description = "Search long-term memory by keywords; best matches first."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "keywords to look for"},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RECALL,
                "default": DEFAULT_RECALL,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str(input["query"])
        limit = int(input.get("limit") or DEFAULT_RECALL)
        try:
            found = _memory(ctx).search(query, limit=min(max(limit, 1), MAX_RECALL))
        except OryxError as err:
            return ToolResult.fail(str(err))
        if not found:
            return ToolResult.ok(f"No memory entry matches {query!r}.")
        return ToolResult.ok("\n".join(f"[{e.saved_at}] {e.text}" for e in found))
