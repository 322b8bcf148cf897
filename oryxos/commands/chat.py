"""``oryxos chat``: talk to an agent in the terminal, or send one message from a script.

Interactive mode shows a spinner while the model thinks, prints the reply as it streams in and
each tool call as it happens;
Ctrl-C cancels the running turn (not the program), Ctrl-D or /exit leaves; readline keeps the
input history in ``.oryxos/chat_history``. litellm (≈ 3 s to import) is imported in a background
thread as soon as the session opens, so the first prompt never waits for it.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from typing import TYPE_CHECKING, Any

import click

from oryxos.catalog import ASK_USER_KEY
from oryxos.commands import CliState, echo_json, pass_state

if TYPE_CHECKING:
    from oryxos.loop import TurnResult
    from oryxos.runtime import Runtime

CHANNEL = "cli"
USER = "local"
HELP = """commands:
  /new     start a new session with this agent (the old one stays stored)
  /tools   list the tools this agent can use here
  /help    this help
  /exit    leave (Ctrl-D works too)
Ctrl-C cancels a running turn."""


@click.command()
@click.option(
    "--profile",
    "-p",
    "profile_name",
    default="default",
    show_default=True,
    metavar="NAME",
    help="The agent to talk to (.oryxos/agents/NAME).",
)
@click.option(
    "--session",
    "-s",
    "session_id",
    metavar="ID",
    help="Continue (or create) this session instead of the agent's latest one.",
)
@click.option(
    "--message",
    "-m",
    metavar="TEXT",
    help="Send one message, print the answer and exit (for scripts).",
)
@click.option("--json", "as_json", is_flag=True, help="With -m: print a JSON object.")
@pass_state
def chat(
    state: CliState,
    profile_name: str,
    session_id: str | None,
    message: str | None,
    as_json: bool,
) -> None:
    """Chat with an agent (interactive), or send one message with -m."""
    runtime = state.runtime()
    profile = runtime.agents.load(profile_name)
    runtime.loop.client_for(profile)  # unknown provider / unset key: clear error, no call made
    if message is not None:
        raise click.exceptions.Exit(one_shot(runtime, profile, message, session_id, as_json))
    if as_json:
        raise click.UsageError("--json needs --message")
    Conversation(runtime, profile, session_id).run()


def one_shot(
    runtime: Runtime, profile: Any, message: str, session_id: str | None, as_json: bool
) -> int:
    """Run one turn; print the answer (or JSON); the exit code (1 if the turn failed)."""
    result = runtime.loop.run_turn(
        profile, message, session_id=session_id, channel=CHANNEL, user=USER
    )
    if as_json:
        echo_json(result.as_dict())
    elif result.success:
        click.echo(result.answer)
    else:
        click.echo(f"error: {result.error}", err=True)
        if result.limit_reached:
            click.echo(result.answer)
    return 0 if result.success else 1


class Spinner:
    """A one-line spinner on stderr (only on a terminal); ``say`` prints above it."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, text: str = "thinking"):
        self.text = text
        self.enabled = sys.stderr.isatty()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        if self.enabled:
            self._thread = threading.Thread(target=self._spin, daemon=True)
            self._thread.start()

    def _spin(self) -> None:
        index = 0
        while not self._stop.wait(0.1):
            with self._lock:
                sys.stderr.write(f"\r{self.FRAMES[index % len(self.FRAMES)]} {self.text}…")
                sys.stderr.flush()
            index += 1

    def _clear(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()

    def say(self, line: str) -> None:
        with self._lock:
            self._clear()
            click.echo(line)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._clear()


class Conversation:
    """The interactive loop: read a line, run a turn in a worker thread, show what happens."""

    def __init__(self, runtime: Runtime, profile: Any, session_id: str | None):
        self.runtime = runtime
        self.profile = profile
        record = runtime.sessions.open(
            profile.name, channel=CHANNEL, user=USER, session_id=session_id
        )
        self.session_id = record.session_id
        self.previous_messages = len(record.messages)
        self._worker: threading.Thread | None = None

    def run(self) -> None:
        self._warm_up()
        self._setup_readline()
        resumed = f", {self.previous_messages} messages so far" if self.previous_messages else ""
        click.echo(
            f"oryxos chat: agent {self.profile.name}, session {self.session_id}{resumed}. "
            "/help for commands."
        )
        sys.stdout.flush()
        while True:
            try:
                line = input("you> ")
            except EOFError:
                click.echo()
                break
            except KeyboardInterrupt:
                click.echo("^C (Ctrl-D or /exit to leave)")
                continue
            line = line.strip()
            if not line:
                continue
            if line.startswith("/"):
                if not self._command(line):
                    break
                continue
            self._turn(line)
        self._finish_cancelled_turn()

    def _finish_cancelled_turn(self) -> None:
        """Let a cancelled turn save its session before the runtime closes the database."""
        if self._worker is not None and self._worker.is_alive():
            click.echo("(waiting for the cancelled turn to stop…)", err=True)
            self._worker.join(60)

    def _warm_up(self) -> None:
        """Start importing the provider library now, while the person types."""
        provider = self.runtime.loop.client_for(self.profile).provider
        warm_up = getattr(provider, "warm_up", None)
        if callable(warm_up):
            warm_up()

    def _setup_readline(self) -> None:
        try:
            import atexit
            import readline
        except ImportError:  # not on every platform
            return
        path = self.runtime.workspace.path / "chat_history"
        with contextlib.suppress(OSError):
            readline.read_history_file(path)
        readline.set_history_length(1000)
        atexit.register(_save_history, readline, path)

    def _command(self, line: str) -> bool:
        """Handle a slash command; False to leave."""
        command = line.split()[0].lower()
        if command in ("/exit", "/quit"):
            return False
        if command == "/help":
            click.echo(HELP)
        elif command == "/new":
            record = self.runtime.sessions.new(self.profile.name, channel=CHANNEL, user=USER)
            self.runtime.sessions.save(record)
            self.session_id = record.session_id
            click.echo(f"new session {self.session_id}")
        elif command == "/tools":
            ctx = self.runtime.loop.context_for(self.profile, self.session_id, CHANNEL, True)
            tools = self.runtime.catalog.build_tools(self.profile.wanted_tools(), ctx)
            if not tools:
                click.echo("this agent has no tools here")
            for tool in tools:
                click.echo(f"  {tool.name:<20} {tool.description}")
        else:
            click.echo(f"unknown command {command}; /help lists them")
        return True

    def _turn(self, line: str) -> None:
        spinner = Spinner()
        cancel = threading.Event()
        outcome: dict[str, Any] = {}
        # The reply is printed as it streams in: "open" while its line is not finished,
        # "shown" is the model call (iteration) whose text was printed last.
        reply: dict[str, Any] = {"open": False, "shown": None}

        def end_line() -> None:
            if reply["open"]:
                click.echo("")
                reply["open"] = False

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if cancel.is_set():
                return  # the reply of a cancelled turn may still stream in: not shown
            if kind == "text":
                if not reply["open"]:
                    spinner.stop()
                    click.echo(f"{self.profile.name}> ", nl=False)
                    reply["open"] = True
                click.echo(data["delta"], nl=False)
                reply["shown"] = data["iteration"]
            elif kind == "text_discarded":
                end_line()
                reply["shown"] = None
                click.echo("  (the reply broke off; asking the model again)")
                spinner.start()
            elif kind == "tool_call":
                if reply["open"]:
                    end_line()
                    spinner.start()
                arguments = data["arguments"]
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
                spinner.say(f"  → {data['name']} {_short(text)}")
            elif kind == "tool_result":
                result = data["result"]
                if result.success:
                    spinner.say(f"  ✓ {data['name']}: {_short(result.content)}")
                else:
                    spinner.say(f"  ✗ {data['name']}: {_short(result.error_message or '')}")

        def ask(question: str) -> str:
            """The ask_user tool's way to the person: pause the spinner, read one line."""
            spinner.stop()
            try:
                return input(f"{self.profile.name} asks: {question}\nyour answer> ")
            finally:
                spinner.start()

        def work() -> None:
            try:
                outcome["result"] = self.runtime.loop.run_turn(
                    self.profile,
                    line,
                    session_id=self.session_id,
                    channel=CHANNEL,
                    user=USER,
                    interactive=True,
                    on_event=on_event,
                    cancel=cancel,
                    tool_extra={ASK_USER_KEY: ask},
                    stream=True,
                )
            except Exception as err:  # shown to the person; the loop logged the details
                outcome["error"] = err

        worker = threading.Thread(target=work, name="oryxos-chat-turn", daemon=True)
        self._worker = worker
        spinner.start()
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
        except KeyboardInterrupt:
            cancel.set()
            spinner.stop()
            end_line()
            click.echo("(cancelled; the session keeps what was done so far)")
            return
        spinner.stop()
        end_line()
        if "error" in outcome:
            click.echo(f"error: {outcome['error']}", err=True)
            return
        result = outcome["result"]
        self._show(result, streamed=result.success and reply["shown"] == result.iterations)

    def _show(self, result: TurnResult, *, streamed: bool = False) -> None:
        """The answer (unless it was already printed as it streamed in), or the error."""
        if streamed:
            return
        if result.success or result.limit_reached:
            click.echo(f"{self.profile.name}> {result.answer}")
        else:
            click.echo(f"error: {result.error}", err=True)


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _save_history(readline: Any, path: Any) -> None:
    with contextlib.suppress(OSError):
        readline.write_history_file(path)
