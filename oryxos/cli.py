"""The ``oryxos`` command line: a click group that plugins extend.

Start-up stays cheap: only click, pluggy, PyYAML and the kernel's light modules are imported
before a command runs, and plugins are found through entry points without importing anything
heavy. Errors meant for people (:class:`~oryxos.errors.OryxError`) print one ``error:`` message
and exit with the error's code (2 for bad input); anything else is logged with its traceback
and reported in one line.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from oryxos import __version__
from oryxos.commands import CliState
from oryxos.errors import EXIT_FAILURE, OryxError

if TYPE_CHECKING:
    from oryxos.plugins import PluginManager

log = logging.getLogger("oryxos.cli")


class OryxGroup(click.Group):
    """A click group that turns OryxErrors into one clear message and an exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except OryxError as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(err.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as err:
            state = ctx.find_object(CliState)
            verbose = state is not None and state.verbose > 0
            # The traceback goes to the log file always, to the console only with -v.
            log.error("internal error", exc_info=True, extra={"console": verbose})
            click.echo(f"error: internal error: {type(err).__name__}: {err}", err=True)
            if not verbose:
                click.echo("(run with -v to see the traceback)", err=True)
            ctx.exit(EXIT_FAILURE)
        return None  # pragma: no cover - ctx.exit raises


def build_cli(pm: PluginManager) -> click.Group:
    """A fresh root group with the built-in commands and every plugin's commands."""
    from oryxos.commands import (
        audit_cmd,
        chat,
        init,
        plugins_cmd,
        profile,
        providers_cmd,
        sandbox_cmd,
        sessions_cmd,
        skill,
        status,
        tool_cmd,
    )

    @click.group(cls=OryxGroup, context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, "--version", prog_name="oryxos")
    @click.option(
        "--workspace",
        "-w",
        "workspace",
        metavar="DIR",
        envvar="ORYXOS_WORKSPACE",
        help="The project directory holding .oryxos/ (or .oryxos/ itself). Default: ./.oryxos",
    )
    @click.option("-v", "--verbose", count=True, help="More log output on stderr (-vv: debug).")
    @click.pass_context
    def oryxos(ctx: click.Context, workspace: str | None, verbose: int) -> None:
        """OryxOS: run many business agents on your own servers.

        An agent is a directory (.oryxos/agents/NAME/AGENT.md); tools, memory, the sandbox,
        audit and the REST API are shared by all of them. Start with 'oryxos init'.
        """
        state = ctx.ensure_object(CliState)
        state.pm = pm
        state.workspace_option = workspace
        state.verbose = verbose
        from oryxos.logs import setup_logging

        setup_logging(None, verbose=verbose)

    for command in (
        init.init,
        status.status,
        plugins_cmd.plugins,
        profile.profile,
        skill.skill,
        chat.chat,
        providers_cmd.provider,
        sessions_cmd.session,
        tool_cmd.tool,
        sandbox_cmd.sandbox,
        audit_cmd.audit,
    ):
        oryxos.add_command(command)
    pm.hook.oryxos_register_commands(cli=oryxos)
    return oryxos


def _prescan_workspace(argv: Sequence[str]) -> str | None:
    """The ``--workspace`` value from the raw arguments (needed before click parses them)."""
    for index, arg in enumerate(argv):
        if arg == "--":
            break
        if arg in ("--workspace", "-w") and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--workspace="):
            return arg.split("=", 1)[1]
    return None


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``oryxos`` console script."""
    from oryxos.plugins import get_plugin_manager
    from oryxos.workspace import locate

    args = list(sys.argv[1:] if argv is None else argv)
    workspace = locate(_prescan_workspace(args))
    pm = get_plugin_manager(disabled=workspace.disabled_plugins())
    cli = build_cli(pm)
    cli.main(args=args, prog_name="oryxos", obj=CliState(pm=pm))


if __name__ == "__main__":  # pragma: no cover
    main()
