"""Shared set-up for the sandbox tests: a workspace with known whitelists and probe tools.

Layout under the test's temporary directory::

    project/.oryxos/      the workspace (project/ is always allowed for files)
    project/notes.txt
    data/f.txt            sandbox.file.allowed_paths
    data2/secret.txt      a sibling whose name starts like the allowed one
    secret/s.txt          outside everything
    skill/SKILL.md        an extra read-only root (like a bound skill folder)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from oryxos.plugins import get_plugin_manager
from oryxos.runtime import Runtime
from oryxos.storage import AuditQuery, ToolInvocationRecord
from oryxos.testing import inline_plugin, make_workspace
from oryxos.tools import Tool, ToolCall, ToolResult

SHELL_ALLOWED = ["ls", "cat", "echo", "grep", "find", "git status", "true", "false", "sleep"]
HTTP_ALLOWED = ["*.feishu.cn", "api.example.com", "Bücher.Example.", "10.1.2.3"]


class Probe(Tool):
    """Returns what it received: a tool whose only effect is to pass the sandbox."""

    def __init__(self, name: str, kind: str):
        self.name = name
        self.description = f"probe for {kind} arguments"
        self.input_schema = {
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        }
        self.sandbox_args = {"value": kind}

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        return ToolResult.ok(input["value"])


PROBES = {
    "read": Probe("probe_read", "file"),
    "write": Probe("probe_write", "file_write"),
    "shell": Probe("probe_shell", "shell"),
    "http": Probe("probe_http", "http"),
}


def _register_probes(catalog: Any, config: Any) -> None:
    for probe in PROBES.values():
        catalog.register(probe, groups=["probe"])


@dataclass
class Sandboxed:
    root: Path
    runtime: Runtime

    @property
    def project(self) -> Path:
        return self.root / "project"

    def call(self, tool: str, value: str, *, case: str, **ctx_args: Any) -> ToolResult:
        ctx = self.runtime.catalog.context(session_id=case, **ctx_args)
        return self.runtime.executor.run(ToolCall(PROBES[tool].name, {"value": value}), ctx)

    def audit_rows(self, case: str) -> list[ToolInvocationRecord]:
        return self.runtime.storage.audit.tool_invocations(AuditQuery(session_id=case)).items


def build(root: Path, *, extra_plugins: list[tuple[str, object]] | None = None) -> Sandboxed:
    project = root / "project"
    project.mkdir()
    workspace = make_workspace(project)
    (project / "notes.txt").write_text("notes\n")
    for name, file, text in (
        ("data", "f.txt", "allowed data\n"),
        ("data2", "secret.txt", "sibling secret\n"),
        ("secret", "s.txt", "top secret\n"),
        ("skill", "SKILL.md", "# a skill\n"),
    ):
        (root / name).mkdir()
        (root / name / file).write_text(text)
    config = yaml.safe_load(workspace.config_file.read_text())
    config["sandbox"] = {
        "file": {"allowed_paths": [str(root / "data")]},
        "shell": {"allowed_commands": SHELL_ALLOWED, "timeout_seconds": 5},
        "http": {"allowed_domains": HTTP_ALLOWED},
    }
    workspace.config_file.write_text(yaml.safe_dump(config))
    plugins = [inline_plugin("probes", oryxos_register_tools=_register_probes)]
    pm = get_plugin_manager(plugins=plugins + (extra_plugins or []), environ={})
    return Sandboxed(root, Runtime.load(workspace, pm))
