"""Built-in interaction plugin: ``ask_user``, for channels where a person is there to answer.

The tool is registered with the availability rule ``is_interactive`` (a built-in ToolContext
predicate), so it is in an agent's tool list only in an interactive context — the CLI chat —
and never in REST calls, gateways or scheduled runs, even when AGENT.md lists it.

**How a channel answers.** The interactive channel puts a callable in the context::

    ctx = catalog.context(interactive=True, extra={ASK_USER_KEY: ask})

where ``ask(question: str) -> str`` shows the question to the person and returns the answer
(the CLI chat: print the question, read one line). The callable may raise ``EOFError`` or
``KeyboardInterrupt`` when the person declines to answer; the tool then reports that.
"""

from __future__ import annotations

from typing import Any

from oryxos import hookimpl
from oryxos.catalog import ASK_USER_KEY
from oryxos.tools import Tool, ToolResult

#: The key of ``ToolContext.extra`` under which an interactive channel supplies its callable.
MAX_QUESTION_CHARS = 2000


class AskUserTool(Tool):
    """Ask the person at the keyboard a question and return the answer.

    Needs ``ctx.extra["ask_user"]``: a callable ``question -> answer`` supplied by the
    interactive channel (see the module docstring).
    """

    name = "ask_user"
    description = "Ask the user a question; use it only when you cannot go on without the answer."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "description": "one clear question (name the choices, if any)",
            }
        },
        "required": ["question"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        question = str(input["question"]).strip()
        if not question:
            return ToolResult.fail("question: may not be empty", retryable=True)
        if len(question) > MAX_QUESTION_CHARS:
            return ToolResult.fail(
                f"question: at most {MAX_QUESTION_CHARS} characters (got {len(question)})",
                retryable=True,
            )
        ask = getattr(ctx, "extra", {}).get(ASK_USER_KEY) if ctx is not None else None
        if not getattr(ctx, "interactive", False) or not callable(ask):
            return ToolResult.fail(
                "ask_user: this channel has no one to ask (not interactive, or it supplied "
                f"no ctx.extra[{ASK_USER_KEY!r}] callable)"
            )
        try:
            answer = ask(question)
        except (EOFError, KeyboardInterrupt):
            return ToolResult.fail("ask_user: the user did not answer")
        answer = "" if answer is None else str(answer).strip()
        if not answer:
            return ToolResult.ok("(the user gave an empty answer)")
        return ToolResult.ok(answer)


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    catalog.register(AskUserTool(), groups=["interaction"], available="is_interactive")
