"""The ToolExecutor: order of checks, failure handling, truncation, hooks and the audit row."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import pytest
from sandbox_kit import build

from oryxos.runtime import Runtime
from oryxos.storage import AuditQuery
from oryxos.tools import ToolCall, ToolResult, tool


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool
def boom(message: str) -> str:
    """Raise an error."""
    raise RuntimeError(message)


@tool
def big(size: int) -> str:
    """Return a long text."""
    return "x" * size


@tool
def login(user: str, api_key: str) -> str:
    """Pretend to log in."""
    return f"hello {user}"


@tool
def interactive_only() -> str:
    """Only when a person is there."""
    return "hi"


def _register(catalog: Any, config: Any) -> None:
    for fn in (add, boom, big, login):
        catalog.register(fn, groups=["test"])
    catalog.register(interactive_only, available="is_interactive")


@pytest.fixture
def env(tmp_path):
    calls: list[tuple[str, bool]] = []

    def before(call, ctx):
        return "no adding 13" if call.name == "add" and call.arguments.get("a") == 13 else None

    def after(call, result, ctx):
        calls.append((call.name, result.success))

    from oryxos.testing import inline_plugin

    sandboxed = build(
        tmp_path,
        extra_plugins=[
            inline_plugin(
                "exec-tests",
                oryxos_register_tools=_register,
                oryxos_before_tool_call=before,
                oryxos_after_tool_call=after,
            )
        ],
    )
    sandboxed.after_calls = calls
    yield sandboxed
    sandboxed.runtime.close()


def run(env, name, args, *, case="c", allowed=None, **ctx_args) -> ToolResult:
    ctx = env.runtime.catalog.context(session_id=case, agent="tester", **ctx_args)
    return env.runtime.executor.run(ToolCall(name, args), ctx, allowed=allowed)


def test_a_successful_call_is_audited_with_its_context(env):
    result = run(env, "add", {"a": 2, "b": 3}, case="ok", channel="cli")
    assert result == ToolResult(True, "5")
    (row,) = env.audit_rows("ok")
    assert (row.tool_name, row.success, row.result, row.agent, row.channel) == (
        "add", True, "5", "tester", "cli",
    )  # fmt: skip
    assert row.input == {"a": 2, "b": 3}
    assert env.after_calls == [("add", True)]


@pytest.mark.parametrize(
    ("name", "args", "allowed", "expected"),
    [
        ("nope", {}, None, "unknown tool 'nope'"),
        ("boom", {"message": "x"}, ["add"], "unknown tool 'boom'; available tools: add"),
        ("add", {"a": "two", "b": 3}, None, "invalid arguments for add at 'a'"),
        ("add", {"a": 1}, None, "'b' is a required property"),
        ("add", {"a": 1, "b": 2, "c": 3}, None, "Additional properties"),
        ("interactive_only", {}, None, "not available here: is_interactive is false"),
        ("boom", {"message": "kaput"}, None, "RuntimeError: kaput"),
    ],
)
def test_retryable_failures_are_audited(env, name, args, allowed, expected):
    result = run(env, name, args, case=f"r-{name}", allowed=allowed)
    assert not result.success and result.retryable
    assert expected in result.error_message
    (row,) = env.audit_rows(f"r-{name}")
    assert row.success is False and expected in row.error_message


def test_arguments_that_are_not_an_object_are_a_retryable_error(env):
    result = env.runtime.executor.run(ToolCall("add", ["a"]), env.runtime.catalog.context())
    assert not result.success and result.retryable and "JSON object" in result.error_message


def test_a_plugin_veto_is_final_and_audited(env):
    result = run(env, "add", {"a": 13, "b": 1}, case="veto")
    assert not result.success and not result.retryable
    assert result.error_message == "tool call refused: no adding 13"
    assert [r.success for r in env.audit_rows("veto")] == [False]
    assert env.after_calls == [("add", False)]


def test_the_sandbox_runs_before_schema_validation(env):
    # an outside path with an extra (invalid) argument: the refusal, not the schema, answers
    result = run(env, "probe_read", {"value": "/etc/passwd", "extra": 1}, case="order")
    assert "sandbox.file.allowed_paths" in result.error_message and not result.retryable


def test_long_output_is_truncated_with_a_note(env):
    env.runtime.config.tools.output_max_bytes = 100
    result = run(env, "big", {"size": 5000}, case="big")
    assert result.success and result.content.startswith("x" * 100)
    assert "[output truncated: 100 of 5000 bytes shown]" in result.content
    (row,) = env.audit_rows("big")
    assert len(row.result) < 200


def test_secret_looking_arguments_are_redacted_in_the_audit(env):
    result = run(env, "login", {"user": "ann", "api_key": "sk-very-secret"}, case="secret")
    assert result.content == "hello ann"
    (row,) = env.audit_rows("secret")
    assert row.input == {"user": "ann", "api_key": "***"}
    assert "sk-very-secret" not in str(row.as_dict())


def test_runtime_whitelist_entries_apply_without_restart_across_runtimes(env, tmp_path):
    target = tmp_path / "secret" / "s.txt"
    assert not run(env, "probe_read", {"value": str(target)}, case="before").success
    # another runtime (its own database connection, like another process) adds an entry
    other = Runtime.load(env.runtime.workspace, env.runtime.pm)
    try:
        other.storage.whitelist.add("file", str(tmp_path / "secret"))
        assert run(env, "probe_read", {"value": str(target)}, case="after").success
        other.storage.whitelist.remove("file", str(tmp_path / "secret"))
    finally:
        other.close()
    assert not run(env, "probe_read", {"value": str(target)}, case="removed").success


def test_eight_threads_calling_tools_at_once_lose_no_audit_row(env):
    per_thread = 15
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(index: int) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                name, args = [
                    ("add", {"a": index, "b": i}),
                    ("probe_read", {"value": "/etc/shadow"}),
                    ("boom", {"message": "x"}),
                ][i % 3]
                run(env, name, args, case=f"thread-{index}")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    audit = env.runtime.storage.audit
    assert audit.tool_invocations(AuditQuery(limit=1)).total == 8 * per_thread
    for index in range(8):
        rows = audit.tool_invocations(AuditQuery(session_id=f"thread-{index}", limit=100))
        assert rows.total == per_thread
        assert sum(r.success for r in rows.items) == per_thread // 3


def test_long_arguments_are_cut_in_the_audit_row(env):
    env.runtime.config.tools.output_max_bytes = 100
    result = run(env, "login", {"user": "u" * 5000, "api_key": "k"}, case="long")
    assert result.success
    (row,) = env.audit_rows("long")
    assert row.input["user"].startswith("u" * 100)
    assert "[output truncated: 100 of 5000 bytes shown]" in row.input["user"]


def test_validators_are_made_once_per_schema_and_never_confused():
    from oryxos.executor import schema_validator, validate_arguments

    class Named:
        name = "named"
        input_schema: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": False,
        }

    assert schema_validator(Named.input_schema) is schema_validator(Named.input_schema)
    assert validate_arguments(Named, {"n": 1}) is None  # type: ignore[arg-type]
    assert "'n' is a required property" in validate_arguments(Named, {})  # type: ignore[arg-type]
    # Schemas made afresh (even equal ones, or at a reused address) each get their own validator.
    for kind in ("string", "integer", "string", "boolean"):

        class Fresh:
            name = "fresh"
            input_schema: ClassVar = {"type": "object", "properties": {"v": {"type": kind}}}

        bad = {"string": 1, "integer": "x", "boolean": "x"}[kind]
        message = validate_arguments(Fresh, {"v": bad})  # type: ignore[arg-type]
        assert message is not None and f"is not of type '{kind}'" in message
        del Fresh
