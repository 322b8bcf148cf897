"""Running turns of the ReAct loop for the API and the console.

The web plugin only adapts: it builds the loop the kernel provides, runs one turn, and reports
the answer, the tool calls made and the token usage in the API's shape.
"""

from __future__ import annotations

from typing import Any

from oryxos_web.errors import ApiError


def _loop_module() -> Any:
    try:
        from oryxos import loop
    except ImportError:
        raise ApiError(
            501, "not_available", "this OryxOS has no ReAct loop (oryxos.loop) installed"
        ) from None
    return loop


def run_session_turn(runtime: Any, record: Any, message: str) -> dict[str, Any]:
    """One turn in a stored session."""
    _loop_module()
    raise ApiError(501, "not_available", "turns are not wired yet")


def run_oneshot_turn(runtime: Any, profile: Any, message: str) -> dict[str, Any]:
    """One stateless turn."""
    _loop_module()
    raise ApiError(501, "not_available", "turns are not wired yet")
