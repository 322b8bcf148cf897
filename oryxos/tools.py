"""The tool contract: what every tool — built-in, third-party or MCP proxy — looks like.

A tool has a name, a description, a JSON Schema for its input and
``execute(input, ctx) -> ToolResult``. Plain typed Python functions become tools through
:func:`tool` / :class:`FunctionTool`: pydantic derives the schema from the type hints, the first
paragraph of the docstring is the description. Arguments are validated against the schema with
jsonschema by the executor before ``execute`` runs.
"""

from __future__ import annotations

import copy
import inspect
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext

TRUNCATION_NOTE = "\n[output truncated: {shown} of {total} bytes shown]"
#: What ``Tool.sandbox_args`` may map an argument to (see docs/sandbox.md).
SANDBOX_KINDS = ("file", "file_write", "shell", "http")


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced. ``content`` is what the model reads on success.

    ``retryable`` tells the loop whether the model may try again (the error goes back to it)
    or the turn must end with this error.
    """

    success: bool
    content: str = ""
    error_message: str | None = None
    retryable: bool = False

    @classmethod
    def ok(cls, content: str) -> ToolResult:
        return cls(True, content)

    @classmethod
    def fail(cls, message: str, *, retryable: bool = False) -> ToolResult:
        return cls(False, "", message, retryable)

    def for_model(self) -> str:
        """The text appended to the conversation for this result."""
        if self.success:
            return self.content
        hint = " (you may correct the call and try again)" if self.retryable else ""
        return f"ERROR: {self.error_message}{hint}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "success": self.success,
            "content": self.content,
            "error_message": self.error_message,
            "retryable": self.retryable,
        }


@dataclass(frozen=True)
class ToolCall:
    """A request to run a tool: by the model, the CLI (``oryxos tool run``) or the API."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None = None


class Tool(ABC):
    """Base class of tools. Subclasses set the three attributes and implement :meth:`execute`."""

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    #: Arguments the executor checks against the sandbox before the tool runs: argument name →
    #: ``"file"`` (read), ``"file_write"``, ``"shell"`` or ``"http"``. The tool receives the
    #: checked value (a file argument becomes its real path; a URL its normalised form).
    sandbox_args: dict[str, str] = {}  # noqa: RUF012

    @abstractmethod
    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool on validated input. Exceptions become a failed ToolResult."""

    def function_schema(self) -> dict[str, Any]:
        """The tool in the OpenAI function-calling format that providers receive.

        ``additionalProperties: false`` is left out of what the model reads: every schema
        byte is sent on every request, and the executor still validates the arguments
        against the full :attr:`input_schema` (an unknown argument is refused there).
        """
        parameters = self.input_schema
        if parameters.get("additionalProperties") is False:
            parameters = {k: v for k, v in parameters.items() if k != "additionalProperties"}
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def with_schema(
        self,
        extra_properties: dict[str, Any] | None = None,
        extra_required: list[str] | None = None,
    ) -> Tool:
        """A copy of this tool whose schema has more properties / required fields.

        Lets a caller (through a catalog builder) ask for caller-specific arguments without
        touching the catalog entry.
        """
        schema = copy.deepcopy(self.input_schema)
        schema.setdefault("properties", {}).update(extra_properties or {})
        required = list(schema.get("required", []))
        required += [name for name in extra_required or [] if name not in required]
        if required:
            schema["required"] = required
        clone = copy.copy(self)
        clone.input_schema = schema
        return clone

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's ``title`` noise: every byte of a schema is sent on every request."""
    if isinstance(schema, dict):
        return {
            key: _clean_schema(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_clean_schema(item) for item in schema]
    return schema


def _is_context_param(param: inspect.Parameter) -> bool:
    annotation = param.annotation
    if isinstance(annotation, str):
        return annotation.split(".")[-1] == "ToolContext" or param.name == "ctx"
    return getattr(annotation, "__name__", "") == "ToolContext" or param.name == "ctx"


class FunctionTool(Tool):
    """A tool made from a typed Python function.

    Parameters become the input schema (pydantic derives it from the type hints, defaults and
    ``Annotated[..., Field(description=...)]``); a parameter named ``ctx`` or annotated
    ``ToolContext`` receives the call's context instead. The function may return a ToolResult,
    a string (success) or any JSON-serialisable value (success, serialised).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        sandbox_args: dict[str, str] | None = None,
    ):
        if not callable(fn):
            raise TypeError(f"a tool must be a Tool or a function, not {type(fn).__name__}")
        self.fn = fn
        self.name = name or fn.__name__
        doc = inspect.getdoc(fn) or ""
        self.description = description or doc.split("\n\n")[0].replace("\n", " ").strip()
        self._context_param: str | None = None
        self.input_schema = self._derive_schema()
        if sandbox_args:
            self.sandbox_args = dict(sandbox_args)

    def _derive_schema(self) -> dict[str, Any]:
        from typing import get_type_hints

        from pydantic import ConfigDict, create_model

        signature = inspect.signature(self.fn)
        try:
            hints = get_type_hints(self.fn, include_extras=True)
        except Exception:  # unresolvable forward references: fall back to raw annotations
            hints = {}
        fields: dict[str, Any] = {}
        for param in signature.parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"tool function {self.name!r} may not take *args or **kwargs")
            if _is_context_param(param):
                self._context_param = param.name
                continue
            annotation = hints.get(param.name, param.annotation)
            if annotation is inspect.Parameter.empty:
                annotation = str
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        model = create_model(  # type: ignore[call-overload]
            f"{self.name}_input", __config__=ConfigDict(extra="forbid"), **fields
        )
        schema = _clean_schema(model.model_json_schema())
        schema.setdefault("properties", {})
        return schema

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        kwargs = dict(input)
        if self._context_param:
            kwargs[self._context_param] = ctx
        value = self.fn(**kwargs)
        if isinstance(value, ToolResult):
            return value
        if isinstance(value, str):
            return ToolResult.ok(value)
        return ToolResult.ok(json.dumps(value, ensure_ascii=False, default=str))


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    sandbox_args: dict[str, str] | None = None,
) -> Any:
    """Decorator: turn a typed function into a :class:`FunctionTool` (``@tool`` or ``@tool()``).

    ``sandbox_args`` is the tool's :attr:`Tool.sandbox_args`, e.g. ``{"path": "file"}``.
    """

    def wrap(func: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(func, name=name, description=description, sandbox_args=sandbox_args)

    return wrap(fn) if fn is not None else wrap


def as_tool(obj: Any) -> Tool:
    """A Tool as is, or a plain function wrapped; anything else is a clear TypeError."""
    if isinstance(obj, Tool):
        return obj
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return FunctionTool(obj)
    raise TypeError(f"expected a Tool instance or a function, got {type(obj).__name__}")


def sandbox_args_problem(tool: Tool) -> str | None:
    """What is wrong with a tool's ``sandbox_args`` (an unknown kind, an argument that is not
    in its schema), or None. A mistake here would leave an argument unchecked."""
    properties = tool.input_schema.get("properties", {})
    for argument, kind in (tool.sandbox_args or {}).items():
        if kind not in SANDBOX_KINDS:
            return (
                f"tool {tool.name!r}: sandbox_args[{argument!r}] is {kind!r}; "
                f"expected one of {', '.join(SANDBOX_KINDS)}"
            )
        if argument not in properties:
            return f"tool {tool.name!r}: sandbox_args names {argument!r}, which is not an argument"
    return None


def truncate_output(text: str, max_bytes: int) -> str:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes and say so at the end."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    shown = data[:max_bytes].decode("utf-8", errors="ignore")
    return shown + TRUNCATION_NOTE.format(shown=len(shown.encode("utf-8")), total=len(data))
