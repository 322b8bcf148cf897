"""``oryxos serve`` and ``oryxos gateway``.

Both import flask and waitress only when they run, so ``oryxos --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from oryxos.commands import CliState, pass_state
from oryxos.errors import UsageError


def _options(fn: Any) -> Any:
    fn = click.option(
        "--insecure", is_flag=True, help="Allow a non-loopback address without server.api_token."
    )(fn)
    fn = click.option(
        "--shutdown-timeout",
        type=click.FloatRange(min=0),
        default=30.0,
        show_default=True,
        metavar="SECONDS",
        help="On SIGTERM/SIGINT, how long turns in flight may take to finish.",
    )(fn)
    fn = click.option(
        "--threads",
        type=click.IntRange(1, 1024),
        default=None,
        help="Worker threads = turns served at once (default: server.threads).",
    )(fn)
    fn = click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=None,
        help="Port (default: server.port; 0 picks a free one).",
    )(fn)
    fn = click.option("--host", default=None, help="Address to bind (default: server.host).")(fn)
    return fn


def _prepare(state: CliState, host: str | None, insecure: bool) -> tuple[Any, str]:
    """The runtime (the workspace created when missing) and the checked host."""
    workspace = state.workspace
    if not workspace.exists():
        from oryxos.commands.init import create_workspace

        create_workspace(workspace.path)
        click.echo(f"initialised a new workspace at {workspace.path}", err=True)
    runtime = state.runtime()
    host = host or runtime.config.server.host
    from oryxos_web.auth import api_token
    from oryxos_web.server import is_loopback

    token = api_token(runtime)  # a ${VAR} that is not set is an error here, not at first request
    if token is None and not is_loopback(host) and not insecure:
        raise UsageError(
            f"refusing to listen on {host} without an API token: anyone who can reach that "
            "address could run your agents and their tools. Set server.api_token (e.g. "
            "api_token: ${ORYXOS_API_TOKEN}) in .oryxos/config.yaml, listen on 127.0.0.1, or "
            "pass --insecure if another layer protects this address."
        )
    runtime.storage.check()
    return runtime, host


def _run(
    state: CliState,
    host: str | None,
    port: int | None,
    threads: int | None,
    shutdown_timeout: float,
    insecure: bool,
    with_channels: bool,
) -> None:
    runtime, host = _prepare(state, host, insecure)
    from oryxos_web import create_app
    from oryxos_web.server import Server

    config = runtime.config.server
    channels: list[tuple[str, Any]] = []
    if with_channels:
        channels = [
            (name, channel)
            for name, channel in runtime.channels.items()
            if not getattr(channel, "interactive", False) and hasattr(channel, "run")
        ]
    app = create_app(runtime)
    server = Server(
        app,
        host=host,
        port=config.port if port is None else port,
        threads=threads or config.threads,
        deadline=shutdown_timeout,
        channels=channels,
        runtime=runtime,
    )
    runtime.startup()
    names = ", ".join(name for name, _ in channels) or "none"
    click.echo(
        f"OryxOS serving on {server.url} (console {server.url}/, API {server.url}/api/v1)"
        + (f"; channels: {names}" if with_channels else ""),
        err=True,
    )
    server.serve()


@click.command()
@_options
@pass_state
def serve(
    state: CliState,
    host: str | None,
    port: int | None,
    threads: int | None,
    shutdown_timeout: float,
    insecure: bool,
) -> None:
    """Serve the REST API (/api/v1) and the web console with waitress.

    Creates the workspace first when there is none. Stops on SIGTERM/SIGINT, letting turns in
    flight finish within --shutdown-timeout.
    """
    _run(state, host, port, threads, shutdown_timeout, insecure, with_channels=False)


@click.command()
@_options
@pass_state
def gateway(
    state: CliState,
    host: str | None,
    port: int | None,
    threads: int | None,
    shutdown_timeout: float,
    insecure: bool,
) -> None:
    """Run the API and every non-interactive channel plugin (IM bots ...) together.

    Each channel registered through oryxos_register_channels runs in its own thread
    (channel.run(runtime, stop_event)) until SIGTERM/SIGINT.
    """
    _run(state, host, port, threads, shutdown_timeout, insecure, with_channels=True)
