"""Running turns of the kernel's ReAct loop for the API and the console.

The web plugin only adapts: it asks ``runtime.loop`` for one turn and reports the answer, the
tool calls made and the token usage in the API's shape. A turn that the provider failed
(the loop reports it as an unsuccessful turn whose answer starts with ``error:``) becomes a 502,
or a 504 when the provider timed out; the session keeps the user's message either way.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from oryxos.errors import OryxError
from oryxos_web.errors import ApiError, from_oryx_error

log = logging.getLogger("oryxos.web")

#: Words in a provider error that mean it timed out (504 rather than 502).
TIMEOUT_WORDS = ("timed out", "timeout")


def _result(result: Any, agent: str, session_id: str | None) -> dict[str, Any]:
    if not result.success and not result.limit_reached and not result.tool_calls:
        error = result.error or result.answer
        if result.answer.startswith("error:"):
            timeout = any(word in error.lower() for word in TIMEOUT_WORDS)
            raise ApiError(
                504 if timeout else 502,
                "provider_timeout" if timeout else "provider_error",
                error,
                {"session_id": session_id},
            )
    usage = result.usage.as_dict() if hasattr(result.usage, "as_dict") else dict(result.usage)
    return {
        "session_id": session_id,
        "agent": agent,
        "answer": result.answer,
        "success": result.success,
        "error": result.error,
        "tool_calls": [_call(c) for c in result.tool_calls],
        "usage": {
            k: usage.get(k, 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")
        },
    }


def _call(call: Any) -> dict[str, Any]:
    arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
    return {"name": call.name, "arguments": arguments, **_outcome(call.result)}


def _outcome(outcome: Any) -> dict[str, Any]:
    return {
        "success": bool(outcome.success),
        "result": outcome.content if outcome.success else None,
        "error_message": None if outcome.success else outcome.error_message,
    }


def _run(loop: Any, profile: Any, message: str, **kwargs: Any) -> Any:
    """``loop.run_turn``; the agent and session exist by now, so an unknown provider or an unset
    key is the server's configuration, not the request: 503 ``not_configured``."""
    from oryxos.errors import ConfigError, NotFoundError

    try:
        return loop.run_turn(profile, message, interactive=False, **kwargs)
    except (ConfigError, NotFoundError) as err:
        raise ApiError(503, "not_configured", str(err)) from None


def run_session_turn(runtime: Any, record: Any, message: str) -> dict[str, Any]:
    """One turn in a stored session (409 if it is archived, from the session manager)."""
    return _session_turn(runtime, runtime.agents.load(record.profile_name), record, message)


def _session_turn(
    runtime: Any, profile: Any, record: Any, message: str, **extra: Any
) -> dict[str, Any]:
    result = _run(
        runtime.loop,
        profile,
        message,
        session_id=record.session_id,
        channel=record.channel,
        user=record.user_id,
        **extra,
    )
    return _result(result, profile.name, record.session_id)


def run_oneshot_turn(runtime: Any, profile: Any, message: str, **extra: Any) -> dict[str, Any]:
    """One turn that leaves no conversation to continue.

    The loop records every turn in a session (tool and model calls in the audit refer to it),
    so a one-shot turn gets a fresh ``invoke:`` session that is archived at once: nothing can
    continue it, and the audit trail stays complete.
    """
    session_id = f"invoke:{profile.name}:{uuid.uuid4().hex[:12]}"
    try:
        result = _run(
            runtime.loop,
            profile,
            message,
            session_id=session_id,
            channel="rest",
            user="invoke",
            **extra,
        )
    finally:
        runtime.storage.sessions.archive(session_id)
    return _result(result, profile.name, None)


# Streaming (Server-Sent Events) -----------------------------------------------------------------

#: Seconds of silence (a long tool call, a slow model) after which a comment line is sent, so
#: that proxies keep the connection and a client that has gone is noticed.
KEEPALIVE_SECONDS = 15.0


def sse(event: str, data: Any) -> str:
    """One Server-Sent Event: ``event: <name>`` and one ``data:`` line of JSON."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def _stream_event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A loop event as the stream sends it (a tool result as in ``tool_calls`` of a turn)."""
    if kind == "tool_result":
        return {"name": data["name"], **_outcome(data["result"])}
    return data


def event_stream_response(events: Iterator[str]) -> Any:
    """A ``text/event-stream`` response of ``events``."""
    from flask import Response

    return Response(
        events,
        mimetype="text/event-stream",
        # no caching, and no buffering by a reverse proxy (nginx honours this header)
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def check_provider(runtime: Any, profile: Any) -> None:
    """An unknown provider or an unset key is a 503 *before* a stream starts (as without one)."""
    from oryxos.errors import ConfigError, NotFoundError

    try:
        runtime.loop.client_for(profile)
    except (ConfigError, NotFoundError) as err:
        raise ApiError(503, "not_configured", str(err)) from None


def stream_session_turn(runtime: Any, record: Any, message: str) -> Iterator[str]:
    """One turn in a stored session, as Server-Sent Events while it runs (see :func:`stream`)."""
    profile = runtime.agents.load(record.profile_name)
    check_provider(runtime, profile)
    return stream(
        lambda **extra: _session_turn(runtime, profile, record, message, **extra),
        name=record.session_id,
    )


def stream_oneshot_turn(runtime: Any, profile: Any, message: str) -> Iterator[str]:
    """:func:`run_oneshot_turn` as Server-Sent Events while it runs (see :func:`stream`)."""
    check_provider(runtime, profile)
    return stream(
        lambda **extra: run_oneshot_turn(runtime, profile, message, **extra),
        name=f"invoke:{profile.name}",
    )


def stream(turn: Callable[..., dict[str, Any]], *, name: str) -> Iterator[str]:
    """Run ``turn(on_event=, cancel=, stream=True)`` on its own thread; its events as SSE text.

    Events: ``thinking``, ``text`` (``delta``: the model's reply as it arrives),
    ``text_discarded`` (the text of a failed model attempt is void: a retry follows),
    ``tool_call``, ``tool_result``; then exactly one of ``done`` (what ``turn`` returned: the
    body a non-streaming request gets) or ``error`` (the API's error body and its ``status``:
    the status line went long before). A client that has gone is noticed when the next event
    is sent; the turn is then cancelled at its next step (the loop's ``cancel``), and what it
    did so far is saved and audited as usual.
    """
    events: queue.Queue[tuple[str, Any]] = queue.Queue()
    cancel = threading.Event()

    def work() -> None:
        try:
            done = turn(
                on_event=lambda kind, data: events.put((kind, _stream_event(kind, data))),
                cancel=cancel,
                stream=True,
            )
            events.put(("done", done))
        except (ApiError, OryxError) as err:  # as the non-streaming request would answer
            api_err = err if isinstance(err, ApiError) else from_oryx_error(err)
            events.put(("error", {"status": api_err.status, **api_err.body()}))
        except Exception as err:  # a bug: logged with its traceback, reported without it
            log.exception("streamed turn %s failed", name)
            bug = ApiError(500, "internal_error", f"internal error ({type(err).__name__})")
            events.put(("error", {"status": 500, **bug.body()}))

    threading.Thread(target=work, name=f"turn-{name}", daemon=True).start()

    def events_text() -> Iterator[str]:
        try:
            while True:
                try:
                    kind, data = events.get(timeout=KEEPALIVE_SECONDS)
                except queue.Empty:
                    yield ": keep-alive\n\n"
                    continue
                yield sse(kind, data)
                if kind in ("done", "error"):
                    return
        finally:
            cancel.set()  # the client went away (or all is sent): nothing more to do

    return events_text()
