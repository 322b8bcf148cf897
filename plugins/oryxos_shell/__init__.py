"""Built-in shell tool: runs a whitelisted command line without a shell.

The line is parsed and checked by the kernel sandbox (``runtime.sandbox.check_command``), which
returns a plan of pipelines of simple commands; :mod:`oryxos_shell.runner` runs that plan with
``subprocess`` — every command in its own process group, a deadline for the whole line that
kills every group, output capped. docs/sandbox.md explains why no shell is involved.
"""

from __future__ import annotations

from typing import Any

from oryxos import hookimpl


@hookimpl
def oryxos_register_tools(catalog: Any, config: Any) -> None:
    from oryxos_shell.tool import ShellTool

    catalog.register(ShellTool(), groups=["shell"])
