"""Running turns of the kernel's ReAct loop for the API and the console.

The web plugin only adapts: it asks ``runtime.loop`` for one turn and reports the answer, the
tool calls made and the token usage in the API's shape. A turn that the provider failed
(the loop reports it as an unsuccessful turn whose answer starts with ``error:``) becomes a 502,
or a 504 when the provider timed out; the session keeps the user's message either way.
"""

from __future__ import annotations

import uuid
from typing import Any

from oryxos_web.errors import ApiError

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
    outcome = call.result
    return {
        "name": call.name,
        "arguments": arguments,
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
    loop = runtime.loop
    profile = runtime.agents.load(record.profile_name)
    result = _run(
        loop,
        profile,
        message,
        session_id=record.session_id,
        channel=record.channel,
        user=record.user_id,
    )
    return _result(result, profile.name, record.session_id)


def run_oneshot_turn(runtime: Any, profile: Any, message: str) -> dict[str, Any]:
    """One turn that leaves no conversation to continue.

    The loop records every turn in a session (tool and model calls in the audit refer to it),
    so a one-shot turn gets a fresh ``invoke:`` session that is archived at once: nothing can
    continue it, and the audit trail stays complete.
    """
    loop = runtime.loop
    session_id = f"invoke:{profile.name}:{uuid.uuid4().hex[:12]}"
    try:
        result = _run(loop, profile, message, session_id=session_id, channel="rest", user="invoke")
    finally:
        runtime.storage.sessions.archive(session_id)
    out = _result(result, profile.name, None)
    return out
