"""The ReAct loop: one user message in, one answer out, tools run in between.

Hand-written and synchronous (concurrency comes from threads, one per turn): message → session
history → PromptBuilder → provider → no tool call: the answer; tool calls (several in one reply
run in order) → ToolExecutor → results appended → again, at most ``settings.max_iterations``
times. Invalid JSON arguments, an unknown tool or a schema failure go back to the model as
retryable errors; a non-retryable tool error ends the turn with that error. Every provider
attempt and every tool call is audited (by ProviderClient and ToolExecutor).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oryxos.errors import OryxError
from oryxos.providers import ProviderClient, ProviderError, ProviderToolCall, Usage, get_provider
from oryxos.tools import ToolCall, ToolResult

if TYPE_CHECKING:
    from oryxos.catalog import ToolContext
    from oryxos.runtime import Runtime
    from oryxos.storage import SessionRecord

log = logging.getLogger("oryxos.loop")

#: Called as ``on_event(kind, data)``: "thinking" (before a provider call), "tool_call" (before
#: a tool runs) and "tool_result" (after), so that a channel can show progress. With
#: ``run_turn(stream=True)`` also "text" (``delta``: a piece of the model's reply as it arrives)
#: and "text_discarded" (the pieces of this model call so far are void: a retry follows).
EventHandler = Callable[[str, dict[str, Any]], None]

LIMIT_MESSAGE = (
    "I stopped before finishing: this turn reached the limit of {n} model calls "
    "(settings.max_iterations in AGENT.md). Ask me to continue, or raise the limit."
)


@dataclass
class ToolCallMade:
    """A tool call of this turn and what came of it."""

    call_id: str
    name: str
    arguments: dict[str, Any] | str
    result: ToolResult

    def as_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "name": self.name,
            "arguments": self.arguments,
            **self.result.as_dict(),
        }


@dataclass
class TurnResult:
    """What one turn produced. ``success`` is False when it ended with an error or the limit."""

    answer: str
    session_id: str
    success: bool = True
    error: str | None = None
    tool_calls: list[ToolCallMade] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    iterations: int = 0
    limit_reached: bool = False
    cancelled: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "session_id": self.session_id,
            "success": self.success,
            "error": self.error,
            "tool_calls": [call.as_dict() for call in self.tool_calls],
            "usage": self.usage.as_dict(),
            "iterations": self.iterations,
            "limit_reached": self.limit_reached,
            "cancelled": self.cancelled,
        }


class TurnCancelled(Exception):
    """Raised inside the loop when the caller's cancel event is set."""


class ReActLoop:
    """Runs turns for any agent of one runtime; safe to share between threads.

    :param prompt_builder: default ``PromptBuilder(runtime)``.
    :param executor: default ``runtime.executor``.
    """

    def __init__(self, runtime: Runtime, *, prompt_builder: Any = None, executor: Any = None):
        self.runtime = runtime
        self._prompt_builder = prompt_builder
        self._executor = executor
        self._clients: dict[tuple[str, str | None], ProviderClient] = {}
        self._lock = threading.Lock()

    @property
    def prompt_builder(self) -> Any:
        if self._prompt_builder is None:
            from oryxos.prompt import PromptBuilder

            self._prompt_builder = PromptBuilder(self.runtime)
        return self._prompt_builder

    @property
    def executor(self) -> Any:
        if self._executor is None:
            self._executor = self.runtime.executor
        return self._executor

    # Set-up ---------------------------------------------------------------------------------

    def client_for(self, profile: Any) -> ProviderClient:
        """The provider client of an agent (checked once: unknown name or unset key fail here)."""
        spec = profile.provider
        name = getattr(spec, "name", None) or self.runtime.config.default_provider
        configured = self.runtime.config.providers.get(name or "")
        fallback = getattr(spec, "fallback", None) or (configured and configured.fallback)
        # AGENT.md is re-read on every load: a changed provider, key or fallback gets a new client.
        key = (
            profile.name,
            name,
            fallback,
            getattr(getattr(spec, "api_key", None), "template", None),
        )
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                where = f"agent {profile.name}"
                client = ProviderClient(
                    self.runtime,
                    get_provider(self.runtime, name, where=where),
                    fallback=get_provider(self.runtime, fallback, where=where)
                    if fallback
                    else None,
                    api_key=getattr(spec, "api_key", None),
                )
                client.check()
                self._clients[key] = client
        return client

    def context_for(
        self,
        profile: Any,
        session_id: str,
        channel: str,
        interactive: bool,
        extra: dict[str, Any] | None = None,
    ) -> ToolContext:
        """The ToolContext of an agent's turn (skill folders readable through the sandbox).

        ``extra`` carries what the channel offers tools, e.g. the ask_user callable under
        :data:`oryxos.catalog.ASK_USER_KEY`.
        """
        ctx = self.runtime.catalog.context(
            agent=profile.name,
            session_id=session_id,
            channel=channel,
            interactive=interactive,
            config=self.runtime.config,
            runtime=self.runtime,
            extra=dict(extra or {}),
        )
        ctx.extra_read_roots = tuple(getattr(profile, "readable_roots", ()) or ())
        return ctx

    # One turn -------------------------------------------------------------------------------

    def run_turn(
        self,
        profile: Any,
        message: str,
        *,
        session_id: str | None = None,
        channel: str = "cli",
        user: str = "local",
        interactive: bool = False,
        on_event: EventHandler | None = None,
        cancel: threading.Event | None = None,
        tool_extra: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> TurnResult:
        """Answer ``message`` in a session of ``profile`` (found or created; see sessions).

        ``tool_extra`` goes to the tools' context (see :meth:`context_for`). ``stream`` asks
        for the model's text as it arrives, as "text" events (providers that cannot stream
        just give none); the result is the same.
        """
        client = self.client_for(profile)  # configuration problems fail before the session
        sessions = self.runtime.sessions
        if session_id is None:
            session_id = sessions.open(profile.name, channel=channel, user=user).session_id
        with sessions.locked(session_id):
            # Read inside the lock: another turn on this session may have just saved it.
            record = sessions.load(session_id, profile.name, channel=channel, user=user)
            return self._turn(
                client,
                profile,
                record,
                message,
                channel,
                interactive,
                on_event,
                cancel,
                tool_extra,
                stream,
            )

    def _turn(
        self,
        client: ProviderClient,
        profile: Any,
        record: SessionRecord,
        message: str,
        channel: str,
        interactive: bool,
        on_event: EventHandler | None,
        cancel: threading.Event | None,
        tool_extra: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> TurnResult:
        emit = on_event or (lambda kind, data: None)
        streaming = stream and on_event is not None
        history = record.messages
        first_new = len(history)  # what this turn adds (merged if another process saves too)
        history.append({"role": "user", "content": message})
        result = TurnResult(answer="", session_id=record.session_id)
        ctx = self.context_for(profile, record.session_id, channel, interactive, tool_extra)
        tools = self.runtime.catalog.build_tools(profile.wanted_tools(), ctx)
        allowed = {tool.name for tool in tools}
        max_iterations = int(profile.settings.max_iterations)
        spec = profile.provider
        system: str | None = None
        try:
            while True:
                if result.iterations >= max_iterations:
                    result.limit_reached, result.success = True, False
                    result.answer = LIMIT_MESSAGE.format(n=max_iterations)
                    result.error = f"max_iterations ({max_iterations}) reached"
                    history.append({"role": "assistant", "content": result.answer})
                    log.warning("agent %s: %s", profile.name, result.error)
                    break
                _check_cancel(cancel)
                result.iterations += 1
                # The system prompt is built once per turn (see PromptBuilder.build).
                prompt = self.prompt_builder.build(profile, history, tools, system=system)
                system = prompt.messages[0]["content"]
                emit("thinking", {"iteration": result.iterations})
                on_text, on_discard = (
                    _text_callbacks(emit, result.iterations) if streaming else (None, None)
                )
                response = client.complete(
                    prompt.messages,
                    prompt.tools or None,
                    model=getattr(spec, "model", None),
                    temperature=getattr(spec, "temperature", None),
                    session_id=record.session_id,
                    agent=profile.name,
                    on_text=on_text,
                    on_discard=on_discard,
                )
                result.usage.add(response.usage)
                history.append(response.assistant_message())
                if not response.tool_calls:
                    result.answer = response.content or ""
                    break
                _check_cancel(cancel)
                failure = self._run_tools(
                    response.tool_calls, ctx, allowed, history, result, emit, cancel
                )
                if failure is not None:
                    result.success, result.error = False, failure
                    result.answer = f"The turn ended because a tool failed: {failure}"
                    history.append({"role": "assistant", "content": result.answer})
                    break
        except ProviderError as err:
            result.success, result.error = False, str(err)
            result.answer = f"error: {err}"
        except TurnCancelled:
            result.success, result.cancelled, result.error = False, True, "cancelled"
            result.answer = "(cancelled)"
        finally:
            _answer_open_tool_calls(history)
            self.runtime.sessions.save(record, new_from=first_new)
        return result

    def _run_tools(
        self,
        calls: list[ProviderToolCall],
        ctx: ToolContext,
        allowed: set[str],
        history: list[dict[str, Any]],
        result: TurnResult,
        emit: EventHandler,
        cancel: threading.Event | None = None,
    ) -> str | None:
        """Run the calls of one reply in order; the error that ends the turn, if any.

        Every tool call id gets a tool message (providers reject a history without one), so
        calls after a fatal failure are answered "skipped".
        """
        failure: str | None = None
        for call in calls:
            _check_cancel(cancel)  # the calls not run yet are answered "cancelled"
            if failure is not None:
                outcome = ToolResult.fail("skipped: an earlier tool call in this reply failed")
                history.append(_tool_message(call.id, outcome))
                continue
            arguments: dict[str, Any] | str
            try:
                arguments = _parse_arguments(call.arguments)
            except ValueError as err:
                arguments = call.arguments
                emit("tool_call", {"name": call.name, "arguments": arguments})
                outcome = self._refuse_arguments(call, str(err), ctx)
            else:
                emit("tool_call", {"name": call.name, "arguments": arguments})
                outcome = self.executor.run(
                    ToolCall(call.name, arguments, call.id), ctx, allowed=allowed
                )
            emit("tool_result", {"name": call.name, "result": outcome})
            result.tool_calls.append(ToolCallMade(call.id, call.name, arguments, outcome))
            history.append(_tool_message(call.id, outcome))
            if not outcome.success and not outcome.retryable:
                failure = f"{call.name}: {outcome.error_message}"
        return failure

    def _refuse_arguments(self, call: ProviderToolCall, problem: str, ctx: ToolContext) -> Any:
        """Arguments that are not a JSON object: a retryable error, audited like any call."""
        from oryxos.storage import ToolInvocationRecord

        outcome = ToolResult.fail(
            f"the arguments of {call.name} are not a valid JSON object ({problem}); "
            "send them again as a JSON object",
            retryable=True,
        )
        record = ToolInvocationRecord(
            tool_name=call.name,
            input={"_raw_arguments": call.arguments[:2000]},
            success=False,
            error_message=outcome.error_message,
            session_id=ctx.session_id,
            agent=ctx.agent,
            channel=ctx.channel,
        )
        try:
            self.runtime.storage.audit.record_tool_invocation(record)
        except OryxError:
            log.error("cannot write the tool_invocations audit row", exc_info=True)
        return outcome


def _answer_open_tool_calls(history: list[dict[str, Any]]) -> None:
    """Give every tool call of the last assistant message a result (cancelled turns).

    Providers reject a history in which a tool call has no ``tool`` message after it, so a
    turn cancelled between the model's reply and its tools must not leave one behind.
    """
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.get("role") == "assistant":
            answered = {m.get("tool_call_id") for m in history[index + 1 :]}
            for call in message.get("tool_calls") or []:
                if call["id"] not in answered:
                    history.append(_tool_message(call["id"], ToolResult.fail("cancelled")))
            return


def _text_callbacks(
    emit: EventHandler, iteration: int
) -> tuple[Callable[[str], None], Callable[[], None]]:
    """``on_text`` and ``on_discard`` of one model call, as "text" / "text_discarded" events."""

    def on_text(piece: str) -> None:
        emit("text", {"delta": piece, "iteration": iteration})

    def on_discard() -> None:
        emit("text_discarded", {"iteration": iteration})

    return on_text, on_discard


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise TurnCancelled


def _parse_arguments(raw: str) -> dict[str, Any]:
    """The model's arguments string as a dict ("" means no arguments)."""
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"invalid JSON: {err.msg} at position {err.pos}") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _tool_message(call_id: str, outcome: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": outcome.for_model()}
