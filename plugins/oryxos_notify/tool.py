"""The ``notify`` tool: send a message to a registered notify channel, named at call time.

The channel name is resolved on every call through ``runtime.notify``, so adding or repointing a
channel needs no agent change. The registry is the control over where messages go: deliveries
are not checked against the HTTP domain whitelist (which governs the ``http_*`` tools, whose
URLs the model chooses); the model can only pick a name that an operator registered.
Auditing is the executor's job, as for every tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oryxos.errors import OryxError, UsageError
from oryxos.tools import Tool, ToolResult

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext

# Sent with every request: the channel's kind (Lark, WeCom, ...) is the channel's business.
DESCRIPTION = "Send a message to a registered notify channel by name; Markdown where supported."


class NotifyTool(Tool):
    """Delivers ``content`` to the channel called ``channel``."""

    name = "notify"
    description = DESCRIPTION
    input_schema = {  # noqa: RUF012 - a class-level schema, never mutated
        "type": "object",
        "properties": {
            "channel": {"type": "string", "description": "the registered channel name"},
            "content": {"type": "string", "minLength": 1, "description": "the message"},
        },
        "required": ["channel", "content"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        runtime = ctx.runtime
        if runtime is None:
            return ToolResult.fail("notify needs a runtime in the tool context")
        channel = input.get("channel", "")
        try:
            delivery = runtime.notify.send(channel, input.get("content", ""))
        except UsageError as err:  # e.g. empty content: the model can fix its call
            return ToolResult.fail(str(err), retryable=True)
        except OryxError as err:  # unknown channel, missing secret variable: no retry helps
            return ToolResult.fail(str(err))
        if delivery.ok:
            return ToolResult.ok(f"delivered to {channel}: {delivery.detail}")
        attempts = f" after {delivery.attempts} attempts" if delivery.attempts > 1 else ""
        return ToolResult.fail(
            f"delivery to {channel} failed{attempts}: {delivery.detail}", retryable=True
        )


def build_notify_tool(ctx: ToolContext) -> Tool:
    """The tool for this call, its description naming the registered channels when it can."""
    tool = NotifyTool()
    runtime = ctx.runtime
    if runtime is not None:
        try:
            names = runtime.notify.names()
        except OryxError:  # no storage: the tool still works (and reports) at call time
            names = []
        if names:
            tool.description = f"{DESCRIPTION} Registered channels: {', '.join(names)}."
    return tool
