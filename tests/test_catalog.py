"""ToolCatalog features the executor relies on: groups, availability, builders that extend a
schema, per-caller factories, and duplicate names."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from oryxos.catalog import ToolCatalog
from oryxos.errors import StartupError
from oryxos.executor import validate_arguments
from oryxos.tools import Tool, ToolResult, tool


@tool
def schedule(when: str) -> str:
    """Schedule something."""
    return f"scheduled at {when}"


class Trigger(Tool):
    """A tool whose handler differs per caller (the reference's ``:triggers`` pattern)."""

    name = "trigger"
    description = "fire a trigger"
    input_schema = {"type": "object", "properties": {"event": {"type": "string"}}}  # noqa: RUF012

    def __init__(self, owner: str):
        self.owner = owner

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult.ok(f"{self.owner} fired {input['event']}")


def _extended(ctx):
    """A builder that asks the caller for one more, required argument."""
    if ctx.extra.get("needs_reason"):
        return schedule.with_schema({"reason": {"type": "string"}}, ["reason"])
    return schedule


def _trigger_builder(ctx):
    factory = ctx.factory("trigger")
    return factory(ctx) if factory else Trigger("nobody")


@pytest.fixture
def catalog():
    catalog = ToolCatalog()
    catalog.current_plugin = "tests"
    catalog.register("schedule", builder=_extended, groups=["time"])
    catalog.register("trigger", builder=_trigger_builder, groups=["time", "events"])
    return catalog


def test_a_builder_extends_the_schema_per_caller_without_touching_the_entry(catalog):
    plain = catalog.build("schedule", catalog.context())
    wider = catalog.build("schedule", catalog.context(extra={"needs_reason": True}))
    assert wider.input_schema["required"] == ["when", "reason"]
    assert "reason" in wider.input_schema["properties"]
    assert "reason" not in plain.input_schema["properties"]
    assert schedule.input_schema["required"] == ["when"]  # the original is untouched
    assert validate_arguments(wider, {"when": "now"}) is not None
    assert validate_arguments(wider, {"when": "now", "reason": "r"}) is None
    assert validate_arguments(plain, {"when": "now"}) is None


def test_with_schema_does_not_duplicate_required_names():
    twice = schedule.with_schema({}, ["when"]).with_schema({"x": {"type": "integer"}}, ["when"])
    assert twice.input_schema["required"] == ["when"]
    assert twice.execute({"when": "9"}, None) == ToolResult(True, "scheduled at 9")


def test_a_factory_in_the_context_supplies_the_handler(catalog):
    mine = catalog.build(
        "trigger", catalog.context(factories={"trigger": lambda c: Trigger("ann")})
    )
    default = catalog.build("trigger", catalog.context())
    assert mine.execute({"event": "e"}, None).content == "ann fired e"
    assert default.execute({"event": "e"}, None).content == "nobody fired e"


def test_groups_select_their_members_and_unknown_names_are_reported(catalog):
    selection = catalog.select(["@events", "schedule", "missing", "@nogroup"], catalog.context())
    assert selection.names == ["schedule", "trigger"]
    assert selection.unknown == ["missing", "@nogroup"]
    assert catalog.groups() == {"events": ["trigger"], "time": ["schedule", "trigger"]}


def test_a_duplicate_name_names_both_plugins(catalog):
    catalog.current_plugin = "other"
    with pytest.raises(StartupError, match="registered twice: by tests and by other"):
        catalog.register(schedule)


@tool
def nap() -> str:
    """Sleep a little."""
    return "zz"


@tool
def never() -> str:
    """Never offered."""
    return ""


@tool
def flaky() -> str:
    """Offered when a callable says so."""
    return ""


def test_availability_rules(catalog):
    catalog.add_predicate("weekday", lambda ctx: ctx.extra.get("day") != "sun")
    catalog.register(nap, available="weekday")
    catalog.register(never, available=False)
    catalog.register(flaky, available=lambda ctx: 1 / 0)
    wanted = ["nap", "never", "flaky", "schedule"]
    monday = catalog.select(wanted, catalog.context(extra={"day": "mon"}))
    sunday = catalog.select(wanted, catalog.context(extra={"day": "sun"}))
    assert monday.names == ["nap", "schedule"]
    assert sunday.names == ["schedule"]
    assert sunday.unavailable["nap"] == "weekday is false"
    assert sunday.unavailable["never"] == "disabled"
    assert sunday.unavailable["flaky"].startswith("availability check failed")


@pytest.mark.parametrize(
    ("sandbox_args", "message"),
    [
        ({"when": "files"}, "sandbox_args['when'] is 'files'; expected one of file, file_write"),
        ({"path": "file"}, "sandbox_args names 'path', which is not an argument"),
    ],
)
def test_invalid_sandbox_args_are_a_startup_error_naming_the_plugin(catalog, sandbox_args, message):
    def planner(when: str) -> str:
        """Plan."""
        return when

    bad = tool(planner, sandbox_args=sandbox_args)
    with pytest.raises(StartupError, match=re.escape(f"plugin tests: tool 'planner': {message}")):
        catalog.register(bad)
    catalog.register("planner", builder=lambda ctx: bad)  # a builder is checked when it runs
    with pytest.raises(StartupError, match=re.escape(message)):
        catalog.build("planner", catalog.context())


def test_a_function_tool_can_declare_sandbox_args(sandboxed):
    @tool(sandbox_args={"path": "file"})
    def size(path: str) -> str:
        """Size of a file."""
        return str(os.path.getsize(path))

    from oryxos.tools import ToolCall

    sandboxed.runtime.catalog.register(size)
    ctx = sandboxed.runtime.catalog.context(session_id="size")
    inside = sandboxed.runtime.executor.run(ToolCall("size", {"path": "notes.txt"}), ctx)
    assert inside.content == "6"  # "notes\n", found from the project directory, not the cwd
    outside = sandboxed.runtime.executor.run(ToolCall("size", {"path": "/etc/passwd"}), ctx)
    assert not outside.success and "sandbox.file.allowed_paths" in outside.error_message
