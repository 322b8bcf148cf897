"""The ToolExecutor: the one way a tool runs — for the model, ``oryxos tool run`` and the API.

Order: known and allowed? → sandbox (``Tool.sandbox_args``) → JSON-schema validation →
``oryxos_before_tool_call`` (a plugin may veto) → ``execute`` → truncation →
``oryxos_after_tool_call`` → one ``tool_invocations`` audit row. Nothing a tool or plugin does
can crash the caller: every outcome, refused and failed calls included, is a ToolResult and an
audit row.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from oryxos.errors import OryxError
from oryxos.sandbox import SandboxViolation
from oryxos.tools import Tool, ToolCall, ToolResult, truncate_output

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext
    from oryxos.runtime import Runtime

log = logging.getLogger("oryxos.executor")

#: Argument names whose values are never written to the audit table.
SECRET_KEY = re.compile(
    r"(api[_-]?key|token|secret|passw(or)?d|authorization|cookie|credential|private[_-]?key)",
    re.IGNORECASE,
)
REDACTED = "***"


def redact(value: Any, max_chars: int | None = None) -> Any:
    """A copy of ``value`` with secret-looking keys' values (and known secrets) masked, and
    strings longer than ``max_chars`` cut (a 10 MB write_file must not make a 10 MB row)."""
    from oryxos.secrets import mask

    if isinstance(value, dict):
        return {
            key: REDACTED if SECRET_KEY.search(str(key)) else redact(item, max_chars)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item, max_chars) for item in value]
    if isinstance(value, str):
        text = mask(value)
        return truncate_output(text, max_chars) if max_chars else text
    return value


class ToolExecutor:
    """Runs tool calls for one runtime. Thread-safe: it keeps no per-call state."""

    def __init__(self, runtime: Runtime):
        self.runtime = runtime

    def run(
        self,
        call: ToolCall,
        ctx: ToolContext,
        *,
        allowed: Collection[str] | None = None,
    ) -> ToolResult:
        """Run one call; ``allowed`` (the agent's tool names) limits what may be called."""
        started = time.monotonic()
        if ctx.runtime is None:
            ctx.runtime = self.runtime
        if ctx.config is None:
            ctx.config = self.runtime.config
        try:
            result = self._run(call, ctx, allowed)
        except Exception as err:  # a bug in the executor's helpers must not crash the caller
            log.error("tool %s: internal error: %s", call.name, err, exc_info=True)
            result = ToolResult.fail(f"internal error running tool {call.name}: {err}")
        result = self._truncate(result)
        try:
            self.runtime.pm.hook.oryxos_after_tool_call(call=call, result=result, ctx=ctx)
        except Exception as err:
            log.error("oryxos_after_tool_call failed for %s: %s", call.name, err, exc_info=True)
        self._audit(call, ctx, result, started)
        return result

    # Steps ------------------------------------------------------------------------------------

    def _run(self, call: ToolCall, ctx: ToolContext, allowed: Collection[str] | None) -> ToolResult:
        catalog = self.runtime.catalog
        if call.name not in catalog or (allowed is not None and call.name not in allowed):
            names = sorted(allowed) if allowed is not None else [e.name for e in catalog.entries()]
            return ToolResult.fail(
                f"unknown tool {call.name!r}; available tools: {', '.join(names) or 'none'}",
                retryable=True,
            )
        entry = catalog.get(call.name)
        catalog.bind(ctx)
        ok, reason = entry.availability(ctx)
        if not ok:
            return ToolResult.fail(
                f"tool {call.name!r} is not available here: {reason}", retryable=True
            )
        tool = catalog.build(call.name, ctx)
        if not isinstance(call.arguments, dict):
            return ToolResult.fail(
                f"the arguments of {call.name} must be a JSON object", retryable=True
            )
        arguments = dict(call.arguments)
        refusal = self._sandbox(tool, arguments, ctx)
        if refusal is not None:
            return refusal
        invalid = validate_arguments(tool, arguments)
        if invalid is not None:
            return ToolResult.fail(invalid, retryable=True)
        veto = self.runtime.pm.hook.oryxos_before_tool_call(call=call, ctx=ctx)
        if veto:
            return ToolResult.fail(f"tool call refused: {veto}")
        return self._execute(tool, arguments, ctx)

    def _sandbox(
        self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext
    ) -> ToolResult | None:
        """Check the declared arguments; replace them with what was checked (real paths)."""
        for name, kind in (getattr(tool, "sandbox_args", None) or {}).items():
            value = arguments.get(name)
            if value is None:
                continue  # a missing required argument is reported by schema validation
            if not isinstance(value, str):
                return ToolResult.fail(f"argument {name!r} must be a string", retryable=True)
            try:
                arguments[name] = self.runtime.sandbox.check_argument(kind, value, ctx)
            except SandboxViolation as err:
                return ToolResult.fail(str(err))
            except OryxError as err:
                return ToolResult.fail(str(err), retryable=True)
        return None

    def _execute(self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = tool.execute(arguments, ctx)
        except SandboxViolation as err:  # a tool's own check (e.g. a path inside a pattern)
            return ToolResult.fail(str(err))
        except OryxError as err:
            return ToolResult.fail(str(err), retryable=True)
        except Exception as err:
            log.warning("tool %s raised %s", tool.name, err, exc_info=True)
            return ToolResult.fail(f"{type(err).__name__}: {err}", retryable=True)
        if not isinstance(result, ToolResult):
            return ToolResult.fail(
                f"tool {tool.name} returned {type(result).__name__}, not a ToolResult"
            )
        return result

    def _truncate(self, result: ToolResult) -> ToolResult:
        limit = self.runtime.config.tools.output_max_bytes
        content = truncate_output(result.content, limit)
        error = truncate_output(result.error_message, limit) if result.error_message else None
        if content is result.content and error is result.error_message:
            return result
        return ToolResult(result.success, content, error, result.retryable)

    def _audit(self, call: ToolCall, ctx: ToolContext, result: ToolResult, started: float) -> None:
        from oryxos.storage import ToolInvocationRecord

        record = ToolInvocationRecord(
            tool_name=call.name,
            input=redact(call.arguments, self.runtime.config.tools.output_max_bytes)
            if isinstance(call.arguments, dict)
            else {},
            success=result.success,
            result=redact(result.content) if result.success else None,
            error_message=redact(result.error_message) if result.error_message else None,
            duration_ms=int((time.monotonic() - started) * 1000),
            session_id=ctx.session_id,
            agent=ctx.agent,
            channel=ctx.channel,
        )
        try:
            self.runtime.storage.audit.record_tool_invocation(record)
        except Exception as err:  # the call happened; losing its row must be loud, not fatal
            log.error("cannot write the audit row for tool %s: %s", call.name, err)


#: Compiled validators by ``id`` of the schema dict; the schema is kept in the value, so an id is
#: never reused while its entry lives, and an entry is only used for that very dict.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}
_VALIDATORS_MAX = 512
_validators_lock = threading.Lock()


def schema_validator(schema: dict[str, Any]) -> Any:
    """The jsonschema validator of ``schema``, made once per schema dict.

    Making a validator (dialect lookup, attrs set-up) cost as much as validating; tools keep
    their schema dict for their lifetime, so validators are cached by that dict's identity.
    A schema changed in place after its first use is not seen: tools do not do that.
    """
    import jsonschema

    cached = _VALIDATORS.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    validator = jsonschema.validators.validator_for(schema)(schema)
    with _validators_lock:
        if len(_VALIDATORS) >= _VALIDATORS_MAX:
            _VALIDATORS.clear()  # schemas built per call would otherwise grow this forever
        _VALIDATORS[id(schema)] = (schema, validator)
    return validator


def validate_arguments(tool: Tool, arguments: dict[str, Any]) -> str | None:
    """None if ``arguments`` fit the tool's schema, else one message naming the argument."""
    import jsonschema

    validator = schema_validator(tool.input_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    at = f" at {where!r}" if where else ""
    return f"invalid arguments for {tool.name}{at}: {error.message}"
