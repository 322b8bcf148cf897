"""``oryxos chat``: one-shot (-m, --json, exit codes), interactive, and restart in a new process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from oryxos.testing import Reply, use_model_server

AGENT = """---
name: greeter
description: Greets people.
provider:
  name: default
tools: [hello]
settings:
  max_iterations: 4
---
You greet people with the hello tool.
"""


@pytest.fixture
def chat_workspace(oryxos_workspace, oryxos_model_server):
    use_model_server(oryxos_workspace, oryxos_model_server, retry_backoff=0.01, max_retries=1)
    agent_dir = oryxos_workspace.agents_dir / "greeter"
    agent_dir.mkdir()
    (agent_dir / "AGENT.md").write_text(AGENT)
    return oryxos_workspace


def test_one_shot_prints_the_answer(chat_workspace, oryxos_cli, oryxos_model_server):
    oryxos_model_server.script(Reply.tool("hello", {"name": "Ada"}), Reply.answer("Greeted Ada."))
    result = oryxos_cli.invoke(["chat", "-p", "greeter", "-m", "greet Ada"])
    assert result.exit_code == 0, result.output
    assert result.output == "Greeted Ada.\n"
    assert oryxos_model_server.requests[1]["messages"][-1]["content"] == "Hello, Ada!"
    system = oryxos_model_server.requests[0]["messages"][0]
    assert system["role"] == "system" and "hello tool" in system["content"]


def test_one_shot_json_has_answer_session_and_tool_calls(
    chat_workspace, oryxos_cli, oryxos_model_server
):
    oryxos_model_server.script(Reply.tool("hello", {"name": "Bo"}), Reply.answer("Done."))
    result = oryxos_cli.invoke(["chat", "-p", "greeter", "-m", "hi", "--json", "-s", "job-1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["answer"] == "Done." and data["session_id"] == "job-1" and data["success"]
    (call,) = data["tool_calls"]
    assert call["name"] == "hello" and call["arguments"] == {"name": "Bo"}
    assert call["content"] == "Hello, Bo!" and call["success"] is True


def test_one_shot_failure_exits_non_zero(chat_workspace, oryxos_cli, oryxos_model_server):
    oryxos_model_server.script(Reply.error(500), Reply.error(500))
    result = oryxos_cli.invoke(["chat", "-p", "greeter", "-m", "hi"])
    assert result.exit_code == 1
    assert "HTTP 500" in result.output and "after 2 attempts" in result.output
    oryxos_model_server.script(Reply.error(500), Reply.error(500))
    as_json = oryxos_cli.invoke(["chat", "-p", "greeter", "-m", "hi", "--json"])
    assert as_json.exit_code == 1 and json.loads(as_json.output)["success"] is False


def test_an_unconfigured_provider_is_a_usage_error_before_any_call(
    oryxos_workspace, oryxos_cli, oryxos_model_server
):
    result = oryxos_cli.invoke(["chat", "-m", "hi"])
    assert result.exit_code == 2
    assert "no default_provider and no providers" in result.output
    assert oryxos_model_server.requests == []


def test_an_unknown_agent_is_a_usage_error(chat_workspace, oryxos_cli):
    result = oryxos_cli.invoke(["chat", "-p", "nobody", "-m", "hi"])
    assert result.exit_code == 2 and "nobody" in result.output


def test_interactive_chat_shows_tools_and_answers(chat_workspace, oryxos_cli, oryxos_model_server):
    oryxos_model_server.script(Reply.tool("hello", {"name": "Cy"}), Reply.answer("Hi Cy!"))
    result = oryxos_cli.invoke(
        ["chat", "-p", "greeter"], input="/help\n/tools\ngreet Cy\n/new\n/bogus\n/exit\n"
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "agent greeter, session cli:local:greeter" in out
    assert "/new" in out and "hello" in out  # help, then the tool list
    assert '→ hello {"name": "Cy"}' in out and "✓ hello: Hello, Cy!" in out
    assert "greeter> Hi Cy!" in out
    assert "new session cli:local:greeter:" in out and "unknown command /bogus" in out


def test_the_first_prompt_does_not_wait_for_litellm(chat_workspace, oryxos_cli, monkeypatch):
    import oryxos_litellm.provider as provider_module

    started, release = threading.Event(), threading.Event()

    def slow_import():  # an import that never finishes while the person types
        started.set()
        release.wait(30)

    monkeypatch.setattr(provider_module, "load_litellm", slow_import)
    try:
        result = oryxos_cli.invoke(["chat", "-p", "greeter"], input="/exit\n")
    finally:
        release.set()
    assert result.exit_code == 0 and "agent greeter" in result.output
    assert started.wait(5)  # the import was started in the background


@pytest.mark.slow
def test_a_new_process_continues_the_session(chat_workspace, oryxos_model_server):
    oryxos_model_server.script(Reply.answer("Noted: blue."), Reply.answer("You said blue."))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORYXOS_")}
    base = [sys.executable, "-m", "oryxos.cli", "-w", str(chat_workspace.path), "chat", "-p"]
    for text in ("my colour is blue", "what is my colour?"):
        done = subprocess.run(
            [*base, "greeter", "-m", text], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr
    assert done.stdout == "You said blue.\n"
    contents = [m["content"] for m in oryxos_model_server.requests[1]["messages"][1:]]
    assert contents == ["my colour is blue", "Noted: blue.", "what is my colour?"]


ASKER = """---
name: asker
provider:
  name: default
tools: [ask_user]
---
Ask the user when you need to know something.
"""


def test_ask_user_reaches_the_person_in_interactive_chat(
    chat_workspace, oryxos_cli, oryxos_model_server
):
    (chat_workspace.agents_dir / "asker").mkdir()
    (chat_workspace.agents_dir / "asker" / "AGENT.md").write_text(ASKER)
    oryxos_model_server.script(
        Reply.tool("ask_user", {"question": "Which colour do you like?"}),
        Reply.answer("Noted: teal."),
    )
    result = oryxos_cli.invoke(["chat", "-p", "asker"], input="pick a colour for me\nteal\n/exit\n")
    assert result.exit_code == 0, result.output
    assert "asker asks: Which colour do you like?" in result.output
    assert "asker> Noted: teal." in result.output
    tool_message = oryxos_model_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "teal" in tool_message["content"]


def test_ask_user_is_not_offered_outside_an_interactive_chat(
    chat_workspace, oryxos_cli, oryxos_model_server
):
    (chat_workspace.agents_dir / "asker").mkdir()
    (chat_workspace.agents_dir / "asker" / "AGENT.md").write_text(ASKER)
    oryxos_model_server.script(Reply.answer("I cannot ask here."))
    result = oryxos_cli.invoke(["chat", "-p", "asker", "-m", "hello"])
    assert result.exit_code == 0, result.output
    assert (
        "tools" not in oryxos_model_server.requests[0]
        or not oryxos_model_server.requests[0]["tools"]
    )


def test_interactive_chat_streams_the_reply_and_prints_it_once(
    chat_workspace, oryxos_cli, oryxos_model_server
):
    oryxos_model_server.script(
        Reply(content="Let me look.", tool_calls=[("hello", '{"name": "Cy"}')]),
        Reply.answer("Hi Cy, nice to meet you!"),
    )
    result = oryxos_cli.invoke(["chat", "-p", "greeter"], input="greet Cy\n/exit\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert oryxos_model_server.requests[0]["stream"] is True  # interactive chat streams
    # The text before the tool call ends its line; the answer is printed once, as it came.
    assert 'greeter> Let me look.\n  → hello {"name": "Cy"}' in out
    assert out.count("Hi Cy, nice to meet you!") == 1
    assert "greeter> Hi Cy, nice to meet you!\n" in out
    # One-shot chat (for scripts) does not stream.
    oryxos_model_server.script(Reply.answer("plain"))
    assert oryxos_cli.invoke(["chat", "-p", "greeter", "-m", "x"]).output.strip() == "plain"
    assert "stream" not in oryxos_model_server.requests[-1]


@pytest.mark.slow
def test_in_a_terminal_ctrl_c_cancels_the_turn_and_replies_stream(
    chat_workspace, oryxos_model_server
):
    """A real pseudo-terminal: the spinner is on, Ctrl-C is the terminal's SIGINT."""
    import pty
    import select
    import signal
    import time

    oryxos_model_server.script(
        Reply.answer("too late").after(3), Reply.answer("Hi again, this time streamed.")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORYXOS_")}
    argv = [sys.executable, "-m", "oryxos.cli", "-w", str(chat_workspace.path), "chat"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the chat, in the terminal
        os.execvpe(sys.executable, [*argv, "-p", "greeter"], env)
    seen = b""

    def read_until(marker: bytes, timeout: float = 30) -> bytes:
        nonlocal seen
        start = len(seen)
        deadline = time.monotonic() + timeout
        while marker not in seen[start:]:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"no {marker!r} in {seen[start:]!r}")
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                raise AssertionError(f"no {marker!r} in {seen[start:]!r}") from None
        return seen[start:]

    try:
        read_until(b"you> ")
        os.write(fd, b"hello\r")
        read_until(b"thinking")  # the spinner runs while the model is slow
        # Ctrl-C only once the model has the request: cancelled earlier (say, while litellm is
        # still being imported on a loaded machine), the turn rightly never asks the model, and
        # the next turn would get this first scripted reply
        deadline = time.monotonic() + 30
        while oryxos_model_server.remaining > 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert oryxos_model_server.remaining == 1, "the first request never reached the model"
        os.write(fd, b"\x03")  # Ctrl-C
        cancelled = read_until(b"you> ")
        assert b"(cancelled; the session keeps what was done so far)" in cancelled
        os.write(fd, b"hi\r")
        answer = read_until(b"you> ")
        assert b"greeter> Hi again, this time streamed." in answer
        assert b"too late" not in seen  # the cancelled turn's late reply is never shown
        os.write(fd, b"/exit\r")
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
