"""The ``shell`` tool: what the model sees and what it gets back."""

from __future__ import annotations

from typing import Any

from oryxos.catalog import ToolContext
from oryxos.errors import OryxError
from oryxos.tools import Tool, ToolResult


def _section(title: str, text: str, dropped: int) -> str:
    if not text and not dropped:
        return ""
    note = f"\n[{dropped} more bytes not shown]" if dropped else ""
    return f"[{title}]\n{text.rstrip(chr(10))}{note}\n"


class ShellTool(Tool):
    name = "shell"
    description = (
        "Run a command line in the project directory: only allowed programs; pipes, ;, &&, ||, "
        "redirections and globs work; $VAR, $(...), & and cd do not."
    )
    input_schema = {  # noqa: RUF012 - sent with every request: kept short
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
        },
        "required": ["command"],
    }
    sandbox_args = {"command": "shell"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        from oryxos_shell.runner import run_plan

        runtime = ctx.runtime
        if runtime is None:
            raise OryxError("the shell tool runs only through a runtime (it needs its sandbox)")
        plan = runtime.sandbox.check_command(input["command"], ctx=ctx)
        settings = runtime.config.sandbox.shell
        timeout = min(input.get("timeout_seconds") or settings.timeout_seconds,
                      settings.timeout_seconds)  # fmt: skip
        result = run_plan(
            plan,
            cwd=str(runtime.workspace.project_dir),
            timeout=timeout,
            max_output=settings.max_output_bytes,
        )
        output = _section("stdout", result.stdout, result.stdout_dropped) + _section(
            "stderr", result.stderr, result.stderr_dropped
        )
        if result.timed_out:
            return ToolResult.fail(
                f"timed out after {timeout:g} s; every process the command started was "
                f"killed\n{output}".rstrip()
            )
        if result.exit_code != 0:
            return ToolResult.fail(
                f"exit code {result.exit_code}\n{output}".rstrip(), retryable=True
            )
        return ToolResult.ok(f"exit code 0\n{output}".rstrip())
