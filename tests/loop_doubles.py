"""Stand-ins for Profile and PromptBuilder, used ONLY by the loop test of an agent-level
``provider.fallback``, which AGENT.md cannot express yet. They follow the contracts in the brief."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any


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
    def build(self, profile: Any, history: list[dict], tools: list, *, system=None) -> Any:
        messages = [{"role": "system", "content": system or f"You are {profile.name}."}, *history]
        return SimpleNamespace(messages=messages, tools=[t.function_schema() for t in tools])
