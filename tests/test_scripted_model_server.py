"""The YAML-scripted model server: script parsing, step matching, faults, and the process."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
import pytest

from oryxos.testing import Script, ScriptedModelServer, ScriptError


def ask(server: ScriptedModelServer, *messages: dict, stream: bool = False) -> httpx.Response:
    return httpx.post(
        f"{server.url}/chat/completions",
        json={"model": "m", "messages": list(messages), "stream": stream},
        timeout=10,
    )


def user(text: str) -> dict:
    return {"role": "user", "content": text}


SCRIPT = """
steps:
  - when: {role: user, contains: weather}
    tool_calls:
      - {name: http_get, arguments: {url: "http://127.0.0.1:${STUB_PORT:-1}/x"}}
  - when: {regex: "^bad\\\\b"}
    tool_calls: [{name: write_file, raw_arguments: '{"path": '}]
  - when: {contains: busy}
    status: 429
    retry_after: 2
    times: 2
  - when: {prompt_contains: vegetarian}
    answer: risotto
  - when: {contains: slow}
    answer: finally
    delay: 0.3
  - answer: any
    repeat: true
"""


@pytest.fixture
def scripted() -> ScriptedModelServer:
    script = Script.parse(SCRIPT, "s.yaml", environ={"STUB_PORT": "9"})
    server = ScriptedModelServer(responder=script.respond).start()
    yield server
    server.stop()


def test_steps_match_on_the_last_message_and_are_used_once(scripted) -> None:
    first = ask(scripted, user("what is the weather?")).json()
    call = first["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == "http_get"
    assert json.loads(call["arguments"]) == {"url": "http://127.0.0.1:9/x"}  # ${VAR} expanded
    # used up: the same question now falls to the repeating catch-all
    again = ask(scripted, user("what is the weather?")).json()
    assert again["choices"][0]["message"]["content"] == "any"


def test_malformed_arguments_are_sent_as_is(scripted) -> None:
    body = ask(scripted, user("bad input")).json()
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"path": '


def test_status_and_retry_after_then_used_up(scripted) -> None:
    for _ in range(2):
        reply = ask(scripted, user("busy?"))
        assert reply.status_code == 429 and reply.headers["Retry-After"] == "2"
    assert ask(scripted, user("busy?")).status_code == 200


def test_prompt_contains_sees_the_system_prompt(scripted) -> None:
    system = {"role": "system", "content": "Memory: the user is vegetarian."}
    assert ask(scripted, system, user("dinner?")).json()["choices"][0]["message"]["content"] == (
        "risotto"
    )


def test_delay_and_streaming(scripted) -> None:
    start = time.monotonic()
    reply = ask(scripted, user("slow please"), stream=True)
    assert time.monotonic() - start >= 0.3
    assert '"content": "finally"' in reply.text and reply.text.endswith("data: [DONE]\n\n")


def test_no_matching_step_is_a_500_naming_the_message() -> None:
    script = Script.parse("steps: [{when: {contains: x}, answer: y}]")
    with ScriptedModelServer(responder=script.respond) as server:
        reply = ask(server, user("hello"))
    assert reply.status_code == 500 and "script exhausted" in reply.text and "hello" in reply.text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("steps: [{answer: a, status: 500}]", "steps[0]: expected exactly one of"),
        ("steps: [{answr: a}]", "steps[0]: unknown key(s) ['answr']"),
        ("steps: [{when: {regex: '('}, answer: a}]", "steps[0].when.regex: not a valid"),
        ("steps: [{tool_calls: [{arguments: {}}]}]", "steps[0].tool_calls[0]: expected name"),
        ("stepz: []", "unknown key(s) ['stepz']"),
        ("steps: [{answer: '${NOPE}'}]", "NOPE"),
    ],
)
def test_bad_scripts_name_the_step_and_key(text: str, message: str) -> None:
    with pytest.raises(ScriptError) as err:
        Script.parse(text, "s.yaml", environ={})
    assert message in str(err.value) and str(err.value).startswith("s.yaml")


def test_runs_as_a_process(tmp_path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("steps: [{answer: hello from the script, repeat: true}]\n")
    log = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "oryxos.testing.model_server",
            "--script",
            str(script),
            "--port",
            "0",
            "--log",
            str(log),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("scripted model server: http://127.0.0.1:"), line
        url = line.split()[3]
        reply = httpx.post(f"{url}/chat/completions", json={"messages": [user("hi")]}, timeout=10)
        assert reply.json()["choices"][0]["message"]["content"] == "hello from the script"
        assert json.loads(log.read_text())["messages"] == [user("hi")]
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
        assert proc.stderr.read() == ""  # no RuntimeWarning from python -m, no traceback


def test_a_bad_script_exits_2_with_one_line(tmp_path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("steps: [{answr: a}]\n")
    done = subprocess.run(
        [sys.executable, "-m", "oryxos.testing.model_server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {script}: steps[0]: unknown key(s) ['answr']")
    assert "Traceback" not in done.stderr


def test_a_client_resetting_its_connection_prints_no_traceback(capsys) -> None:
    import socket
    import struct

    with ScriptedModelServer() as server:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # half a request
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST
        time.sleep(0.3)
        assert ask(server, user("still alive?")).status_code == 500  # empty script, still serving
    assert "Traceback" not in capsys.readouterr().err


def test_the_model_server_needs_no_pytest() -> None:
    """Examples start it after a plain ``pip install -e .`` (pytest is a dev extra)."""
    code = (
        "import sys; sys.modules['pytest'] = None\n"
        "from oryxos.testing.model_server import main\n"
        "from oryxos.testing import Reply, ScriptedModelServer\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
