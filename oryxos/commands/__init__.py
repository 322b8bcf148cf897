"""Built-in commands of the ``oryxos`` CLI and what they share (:class:`CliState`)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from oryxos.plugins import PluginManager
    from oryxos.runtime import Runtime
    from oryxos.workspace import Workspace


@dataclass
class CliState:
    """What the root command learned (workspace, verbosity) and the plugin manager it built."""

    pm: PluginManager = None  # type: ignore[assignment]  # set by the root command
    workspace_option: str | None = None
    verbose: int = 0
    _runtime: Runtime | None = field(default=None, repr=False)

    @property
    def workspace(self) -> Workspace:
        from oryxos.workspace import locate

        return locate(self.workspace_option)

    def runtime(self) -> Runtime:
        """The workspace's runtime (config validated, logging to the workspace set up)."""
        if self._runtime is None:
            from oryxos.logs import setup_logging
            from oryxos.runtime import Runtime

            runtime = Runtime.load(self.workspace, self.pm)
            setup_logging(
                runtime.workspace.logs_dir,
                verbose=self.verbose,
                file_level=runtime.config.logging.level,
                max_bytes=runtime.config.logging.max_bytes,
                backup_count=runtime.config.logging.backup_count,
            )
            self._runtime = runtime
            click.get_current_context().call_on_close(runtime.close)
        return self._runtime


pass_state = click.make_pass_decorator(CliState)


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (what ``--json`` options print)."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def json_option(fn: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(fn)


def table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain, aligned text table."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(str(cell)))
    lines = ["  ".join(h.upper().ljust(widths[i]) for i, h in enumerate(headers)).rstrip()]
    for row in rows:
        lines.append("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(row)).rstrip())
    return "\n".join(lines)


def is_tty() -> bool:
    return sys.stdout.isatty()
