"""Minimal stand-ins for Profile, PromptBuilder and ToolExecutor, used ONLY by the loop tests
until (and where) the real ones are not needed. They follow the contracts in the brief."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from oryxos.storage import ToolInvocationRecord
from oryxos.tools import ToolResult


@dataclass
class FakeProfile:
    name: str = "tester"
    provider_name: str | None = "default"
    model: str | None = None
    temperature: float | None = None
    fallback: str | None = None
    tools: list[str] = field(default_factory=lambda: ["echo", "add", "explode"])
    max_iterations: int = 10
    readable_roots: tuple = ()

    @property
    def provider(self) -> Any:
        return SimpleNamespace(
            name=self.provider_name,
            model=self.model,
            temperature=self.temperature,
            api_key=None,
            fallback=self.fallback,
        )

    @property
    def settings(self) -> Any:
        return SimpleNamespace(max_iterations=self.max_iterations, max_history_turns=20)

    def wanted_tools(self) -> list[str]:
        return list(self.tools)


class SimplePromptBuilder:
    def build(self, profile: Any, history: list[dict], tools: list) -> Any:
        messages = [{"role": "system", "content": f"You are {profile.name}."}, *history]
        return SimpleNamespace(messages=messages, tools=[t.function_schema() for t in tools])


class SimpleExecutor:
    """Unknown/not allowed → retryable; schema failure → retryable; always one audit row."""

    def __init__(self, runtime: Any):
        self.runtime = runtime

    def run(self, call: Any, ctx: Any, *, allowed: Any = None) -> ToolResult:
        import jsonschema

        start = time.perf_counter()
        if (
            allowed is not None and call.name not in allowed
        ) or call.name not in self.runtime.catalog:
            result = ToolResult.fail(f"unknown tool {call.name!r}", retryable=True)
        else:
            tool = self.runtime.catalog.build(call.name, ctx)
            try:
                jsonschema.validate(call.arguments, tool.input_schema)
            except jsonschema.ValidationError as err:
                result = ToolResult.fail(f"invalid arguments: {err.message}", retryable=True)
            else:
                try:
                    result = tool.execute(call.arguments, ctx)
                except Exception as err:
                    result = ToolResult.fail(f"{type(err).__name__}: {err}")
        self.runtime.storage.audit.record_tool_invocation(
            ToolInvocationRecord(
                tool_name=call.name,
                input=call.arguments,
                success=result.success,
                result=result.content,
                error_message=result.error_message,
                duration_ms=int((time.perf_counter() - start) * 1000),
                session_id=ctx.session_id,
                agent=ctx.agent,
                channel=ctx.channel,
            )
        )
        return result
