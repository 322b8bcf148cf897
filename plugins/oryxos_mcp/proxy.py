"""The proxy tool: one catalog tool per tool of an MCP server, and its result conversion."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from oryxos.tools import Tool, ToolResult

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext
    from oryxos_mcp.server import McpServer, ToolInfo


class McpProxyTool(Tool):
    """A tool that forwards ``execute`` to ``tools/call`` on its server.

    Name, description and input schema are the server's, as declared in ``tools/list``. Every
    failure — the server down or silent, a protocol error, or a result with ``is_error`` — is a
    *retryable* ToolResult: the model may try again (the server is restarted on the next call).
    Sandbox checks and the audit row are the executor's job, as for any tool.
    """

    def __init__(self, server: McpServer, info: ToolInfo):
        self.server = server
        self.name = info.name
        self.description = info.description
        self.input_schema = info.input_schema

    @property
    def server_name(self) -> str:
        return self.server.name

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        outcome = self.server.call(self.name, dict(input))
        if outcome.error is not None:
            return ToolResult.fail(outcome.error, retryable=True)
        return to_tool_result(outcome.result)


def _content_text(item: Any) -> str:
    kind = getattr(item, "type", "")
    if kind == "text":
        return item.text
    if kind in ("image", "audio"):
        size = len(getattr(item, "data", "") or "")
        return f"[{kind} {getattr(item, 'mime_type', '')}: {size} base64 characters not shown]"
    if kind == "resource_link":
        name = getattr(item, "name", "") or ""
        return f"[resource {item.uri}{' ' + name if name else ''}]"
    if kind == "resource":
        resource = item.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return text
        return f"[resource {resource.uri}: {getattr(resource, 'mime_type', '') or 'binary'}]"
    return f"[{kind or type(item).__name__} content not shown]"


def to_tool_result(result: Any) -> ToolResult:
    """An MCP ``CallToolResult`` → ToolResult.

    The text parts of ``content`` are joined by newlines (images, audio and binary resources
    are described, not inlined); when there is no text, ``structured_content`` is given as JSON.
    ``is_error`` makes a failed, retryable result whose message is that text.
    """
    text = "\n".join(_content_text(item) for item in (result.content or []))
    structured = getattr(result, "structured_content", None)
    if not text.strip() and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, default=str)
    if result.is_error:
        message = text or "the tool reported an error without a message"
        return ToolResult.fail(message, retryable=True)
    return ToolResult.ok(text)
