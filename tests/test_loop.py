"""The ReAct loop end to end over real HTTP: litellm → the scripted model server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time

import pytest

from oryxos.errors import ConfigError, NotFoundError
from oryxos.loop import ReActLoop
from oryxos.runtime import Runtime
from oryxos.storage import AuditQuery
from oryxos.testing import Reply, inline_plugin, use_model_server
from oryxos.tools import ToolResult, tool


@tool
def echo(text: str) -> str:
    """Repeat the text."""
    return f"echo:{text}"


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool
def explode() -> ToolResult:
    """Fail in a way the model cannot fix."""
    return ToolResult.fail("the disk is on fire")


def _register(catalog):
    for fn in (echo, add, explode):
        catalog.register(fn)


TOOLS_PLUGIN = inline_plugin("testtools", oryxos_register_tools=_register)


@pytest.fixture
def make_loop(oryxos_workspace, oryxos_model_server, oryxos_make_pm):
    runtimes = []

    def make(**provider_settings):
        use_model_server(
            oryxos_workspace,
            oryxos_model_server,
            **{"retry_backoff": 0.01, **provider_settings},
        )
        runtime = Runtime.load(oryxos_workspace, oryxos_make_pm([TOOLS_PLUGIN]))
        runtimes.append(runtime)
        return ReActLoop(runtime)

    yield make
    for runtime in runtimes:
        runtime.close()


def agent(loop, *, name="tester", provider_name="default", tools=("echo", "add", "explode"),
          max_iterations=10):  # fmt: skip
    """Write .oryxos/agents/NAME/AGENT.md and load it as the runtime does."""
    directory = loop.runtime.workspace.agents_dir / name
    directory.mkdir(exist_ok=True)
    provider = f"provider:\n  name: {provider_name}\n" if provider_name else ""
    (directory / "AGENT.md").write_text(
        f"---\nname: {name}\n{provider}tools: {json.dumps(list(tools))}\n"
        f"settings:\n  max_iterations: {max_iterations}\n---\nYou are {name}.\n"
    )
    return loop.runtime.agents.load(name)


def llm_rows(runtime, **filters):
    return runtime.storage.audit.llm_calls(AuditQuery(limit=1000, **filters)).items


def tool_rows(runtime, **filters):
    return runtime.storage.audit.tool_invocations(AuditQuery(limit=1000, **filters)).items


def test_a_turn_with_one_tool_call(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(Reply.tool("echo", {"text": "hi"}), Reply.answer("done"))
    result = loop.run_turn(agent(loop), "say hi")
    assert result.success and result.answer == "done"
    assert result.iterations == 2
    assert [(c.name, c.arguments, c.result.content) for c in result.tool_calls] == [
        ("echo", {"text": "hi"}, "echo:hi")
    ]
    second = oryxos_model_server.requests[1]
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["content"] == "echo:hi"
    assert [t["function"]["name"] for t in second["tools"]] == ["add", "echo", "explode"]
    assert result.usage.total_tokens > 0
    assert len(llm_rows(loop.runtime)) == 2 and len(tool_rows(loop.runtime)) == 1


def test_two_tool_calls_in_one_reply_run_in_order(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(
        Reply.tools(("add", {"a": 2, "b": 3}), ("echo", {"text": "x"})), Reply.answer("5 and x")
    )
    result = loop.run_turn(agent(loop), "go")
    assert result.answer == "5 and x"
    assert [c.result.content for c in result.tool_calls] == ["5", "echo:x"]
    tools_seen = [m for m in oryxos_model_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tools_seen] == ["5", "echo:x"]
    assert [r.tool_name for r in reversed(tool_rows(loop.runtime))] == ["add", "echo"]


def test_max_iterations_ends_the_turn_with_a_clear_recorded_message(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.responder = lambda body: Reply.tool("echo", {"text": "again"})
    result = loop.run_turn(agent(loop, max_iterations=3), "loop forever")
    assert not result.success and result.limit_reached
    assert "limit of 3 model calls" in result.answer
    assert len(oryxos_model_server.requests) == 3
    stored = loop.runtime.sessions.get(result.session_id)
    assert stored.messages[-1] == {"role": "assistant", "content": result.answer}
    assert len(llm_rows(loop.runtime)) == 3 and len(tool_rows(loop.runtime)) == 3


def test_a_429_is_retried_after_retry_after_with_a_row_per_attempt(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(Reply.error(429, retry_after=0.3), Reply.answer("ok"))
    start = time.perf_counter()
    result = loop.run_turn(agent(loop), "hi")
    assert result.answer == "ok"
    assert time.perf_counter() - start >= 0.3  # Retry-After honoured (backoff alone is 0.01)
    rows = sorted(llm_rows(loop.runtime), key=lambda r: r.id)
    assert [(r.attempt, r.success) for r in rows] == [(1, False), (2, True)]
    assert "429" in rows[0].error_message
    assert rows[1].total_tokens > 0 and rows[0].session_id == result.session_id


def test_500s_are_retried_then_the_turn_fails_with_every_attempt_audited(
    make_loop, oryxos_model_server
):
    loop = make_loop(max_retries=2)
    oryxos_model_server.script(Reply.error(500), Reply.error(503), Reply.answer("ok"))
    assert loop.run_turn(agent(loop), "one").answer == "ok"
    oryxos_model_server.script(Reply.error(500), Reply.error(500), Reply.error(500))
    result = loop.run_turn(agent(loop), "two")
    assert not result.success and "HTTP 500" in result.error and "after 3 attempts" in result.error
    rows = sorted(llm_rows(loop.runtime), key=lambda r: r.id)
    assert [(r.attempt, r.success) for r in rows] == [
        (1, False), (2, False), (3, True), (1, False), (2, False), (3, False)
    ]  # fmt: skip
    assert len(oryxos_model_server.requests) == 6


def test_a_400_is_not_retried(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(Reply.error(400), Reply.answer("never"))
    result = loop.run_turn(agent(loop), "hi")
    assert not result.success and "400" in result.error
    assert len(llm_rows(loop.runtime)) == 1 and oryxos_model_server.remaining == 1


def test_a_timeout_is_retried(make_loop, oryxos_model_server):
    loop = make_loop(timeout=0.5, max_retries=1)
    oryxos_model_server.script(Reply.answer("late").after(1.2), Reply.answer("in time"))
    result = loop.run_turn(agent(loop), "hi")
    assert result.answer == "in time"
    rows = sorted(llm_rows(loop.runtime), key=lambda r: r.id)
    assert [r.success for r in rows] == [False, True]
    assert "timed out" in rows[0].error_message


def test_bad_arguments_go_back_to_the_model_and_are_retried(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(
        Reply.malformed("echo", '{"text": '),
        Reply.tool("echo", {"txt": "typo"}),
        Reply.tool("nope", {}),
        Reply.tool("echo", {"text": "fixed"}),
        Reply.answer("done"),
    )
    result = loop.run_turn(agent(loop), "go")
    assert result.success and result.answer == "done"
    outcomes = [(c.result.success, c.result.retryable) for c in result.tool_calls]
    assert outcomes == [(False, True), (False, True), (False, True), (True, False)]
    fed_back = [r["messages"][-1]["content"] for r in oryxos_model_server.requests[1:4]]
    assert "not a valid JSON object" in fed_back[0] and "try again" in fed_back[0]
    assert "invalid arguments" in fed_back[1] and "unknown tool" in fed_back[2]
    assert len(tool_rows(loop.runtime)) == 4  # the malformed call is audited too


def test_a_non_retryable_tool_error_ends_the_turn(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(
        Reply.tools(("explode", {}), ("echo", {"text": "never"})), Reply.answer("unreached")
    )
    result = loop.run_turn(agent(loop), "go")
    assert not result.success and "the disk is on fire" in result.error
    assert len(oryxos_model_server.requests) == 1 and [c.name for c in result.tool_calls] == [
        "explode"
    ]
    history = loop.runtime.sessions.get(result.session_id).messages
    tool_messages = [m for m in history if m["role"] == "tool"]
    assert len(tool_messages) == 2 and "skipped" in tool_messages[1]["content"]


def test_a_cancelled_turn_stops_before_the_next_model_call_and_keeps_its_history(
    make_loop, oryxos_model_server
):
    loop = make_loop()
    cancel = threading.Event()

    def on_event(kind, data):
        if kind == "tool_result":  # as if Ctrl-C were pressed while the tool ran
            cancel.set()

    oryxos_model_server.script(Reply.tools(("echo", {"text": "x"}), ("add", {"a": 1, "b": 1})))
    result = loop.run_turn(agent(loop), "go", on_event=on_event, cancel=cancel)
    assert result.cancelled and not result.success
    assert len(oryxos_model_server.requests) == 1 and oryxos_model_server.remaining == 0
    assert [c.name for c in result.tool_calls] == ["echo"]  # add was not run
    history = loop.runtime.sessions.get(result.session_id).messages
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    assert history[-1]["content"] == "ERROR: cancelled"


def test_a_turn_cancelled_while_the_model_answers_leaves_no_unanswered_tool_call(
    make_loop, oryxos_model_server
):
    loop = make_loop()
    cancel = threading.Event()
    oryxos_model_server.script(Reply.tools(("echo", {"text": "a"}), ("add", {"a": 1, "b": 2})))
    result = loop.run_turn(
        agent(loop), "go", on_event=lambda kind, data: cancel.set(), cancel=cancel
    )
    assert result.cancelled and result.tool_calls == []
    history = loop.runtime.sessions.get(result.session_id).messages
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    assert {m["tool_call_id"] for m in history[2:]} == {c["id"] for c in history[1]["tool_calls"]}
    assert all(m["content"] == "ERROR: cancelled" for m in history[2:])


def test_history_carries_over_between_turns(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.script(Reply.answer("first answer"), Reply.answer("second answer"))
    one = loop.run_turn(agent(loop), "first question")
    two = loop.run_turn(agent(loop), "second question")
    assert one.session_id == two.session_id == "cli:local:tester"
    system, *rest = oryxos_model_server.requests[1]["messages"]
    assert system["role"] == "system" and "You are tester." in system["content"]
    assert [m["content"] for m in rest] == ["first question", "first answer", "second question"]


def test_unknown_provider_and_unset_key_fail_before_any_call(
    make_loop, oryxos_model_server, oryxos_workspace, monkeypatch
):
    loop = make_loop()
    with pytest.raises(NotFoundError, match="unknown provider 'nope'"):
        loop.run_turn(agent(loop, provider_name="nope"), "hi")
    text = oryxos_workspace.config_file.read_text()
    oryxos_workspace.config_file.write_text(
        text.replace("sk-scripted-test", "${ORYXOS_TEST_UNSET_KEY}")
    )
    monkeypatch.delenv("ORYXOS_TEST_UNSET_KEY", raising=False)
    runtime = Runtime.load(oryxos_workspace, loop_runtime_pm())
    try:
        with pytest.raises(ConfigError, match="ORYXOS_TEST_UNSET_KEY is not set"):
            fresh = ReActLoop(runtime)
            fresh.run_turn(agent(fresh), "x")
    finally:
        runtime.close()
    assert oryxos_model_server.requests == []


def loop_runtime_pm():
    from oryxos.plugins import get_plugin_manager

    return get_plugin_manager(plugins=[TOOLS_PLUGIN], environ={})


def test_a_fallback_provider_answers_when_the_primary_fails(
    make_loop, oryxos_model_server, oryxos_workspace
):
    from oryxos.testing import ScriptedModelServer

    with ScriptedModelServer([Reply.answer("from the fallback")]) as backup:
        use_model_server(oryxos_workspace, backup, name="backup")
        loop = make_loop(max_retries=0)  # rewrites "default" and makes it the default again
        oryxos_model_server.script(Reply.error(500))
        profile = agent(loop)
        agent_md = profile.directory / "AGENT.md"
        agent_md.write_text(
            agent_md.read_text().replace("name: default\n", "name: default\n  fallback: backup\n")
        )
        profile = loop.runtime.agents.load(profile.name)
        assert profile.provider.fallback == "backup"
        result = loop.run_turn(profile, "hi")
    assert result.answer == "from the fallback"
    rows = sorted(llm_rows(loop.runtime), key=lambda r: r.id)
    assert [(r.provider, r.success) for r in rows] == [("default", False), ("backup", True)]


def test_a_fallback_can_be_set_on_the_provider_entry(
    make_loop, oryxos_model_server, oryxos_workspace
):
    from oryxos.testing import ScriptedModelServer

    with ScriptedModelServer([Reply.answer("backup here")]) as backup:
        use_model_server(oryxos_workspace, backup, name="backup")
        loop = make_loop(max_retries=1, fallback="backup")
        oryxos_model_server.script(Reply.error(503), Reply.error(503))
        result = loop.run_turn(agent(loop, provider_name=None), "hi")
    assert result.answer == "backup here"
    rows = sorted(llm_rows(loop.runtime), key=lambda r: r.id)
    assert [(r.provider, r.attempt, r.success) for r in rows] == [
        ("default", 1, False),
        ("default", 2, False),
        ("backup", 1, True),
    ]


def test_twenty_concurrent_sessions_keep_separate_histories(make_loop, oryxos_model_server):
    loop = make_loop()

    def respond(body):
        last = body["messages"][-1]
        if last["role"] == "user":
            return Reply.tool("echo", {"text": last["content"]})
        return Reply.answer(f"answer to {body['messages'][-3]['content']}")

    oryxos_model_server.responder = respond
    errors = []
    profile = agent(loop)

    def converse(n):
        try:
            for turn in range(2):
                result = loop.run_turn(profile, f"s{n}-t{turn}", session_id=f"s-{n}")
                assert result.answer == f"answer to s{n}-t{turn}", result
        except Exception as err:  # reported below: an assert in a thread is not a failure
            errors.append(err)

    threads = [threading.Thread(target=converse, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    for n in range(20):
        history = loop.runtime.sessions.get(f"s-{n}").messages
        users = [m["content"] for m in history if m["role"] == "user"]
        tools = [m["content"] for m in history if m["role"] == "tool"]
        assert users == [f"s{n}-t0", f"s{n}-t1"]
        assert tools == [f"echo:s{n}-t0", f"echo:s{n}-t1"]
        assert len(history) == 8
    assert len(llm_rows(loop.runtime)) == 80 == len(oryxos_model_server.requests)
    assert len(tool_rows(loop.runtime)) == 40


def test_turns_on_one_session_are_serialised(make_loop, oryxos_model_server):
    loop = make_loop()
    oryxos_model_server.responder = lambda body: Reply.answer(
        f"re:{body['messages'][-1]['content']}"
    ).after(0.1)
    profile = agent(loop)
    threads = [threading.Thread(target=loop.run_turn, args=(profile, f"m{n}")) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    history = loop.runtime.sessions.get("cli:local:tester").messages
    assert len(history) == 8
    for user, answer in zip(history[::2], history[1::2], strict=True):
        assert answer["content"] == f"re:{user['content']}"


def test_hook_oryxos_after_llm_call(oryxos_workspace, oryxos_model_server):
    seen = []
    plugin = inline_plugin("llmwatch", oryxos_after_llm_call=lambda record: seen.append(record))
    use_model_server(oryxos_workspace, oryxos_model_server, retry_backoff=0.01)
    from oryxos.plugins import get_plugin_manager

    runtime = Runtime.load(oryxos_workspace, get_plugin_manager(plugins=[plugin], environ={}))
    try:
        oryxos_model_server.script(Reply.error(502), Reply.answer("ok"))
        loop = ReActLoop(runtime)
        loop.run_turn(agent(loop, tools=[]), "hi")
    finally:
        runtime.close()
    assert [(r.attempt, r.success, r.provider) for r in seen] == [
        (1, False, "default"),
        (2, True, "default"),
    ]
    assert all(r.id is not None for r in seen)  # the hook sees the row as written


@pytest.mark.filterwarnings("ignore::UserWarning")  # pydantic about litellm's stream types
def test_the_model_server_streams_sse(oryxos_model_server):
    from oryxos_litellm.provider import load_litellm

    litellm = load_litellm()
    oryxos_model_server.script(Reply.answer("streamed text"), Reply.tool("echo", {"text": "s"}))
    kwargs = dict(
        model="openai/x",
        api_base=oryxos_model_server.url,
        api_key="sk-x",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        num_retries=0,
    )
    text = "".join(c.choices[0].delta.content or "" for c in litellm.completion(**kwargs))
    assert text == "streamed text"
    chunks = list(litellm.completion(**kwargs))
    calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert calls[0].function.name == "echo"
    assert json.loads(calls[0].function.arguments) == {"text": "s"}
    assert all(r["stream"] for r in oryxos_model_server.requests)


def test_every_call_of_a_turn_sends_the_same_system_prompt(make_loop, oryxos_model_server):
    loop = make_loop()
    profile = agent(loop)

    def save_in_between(body):
        loop.runtime.memory.save("A fact saved during the turn.")
        return Reply.answer("done")

    oryxos_model_server.script(Reply.tool("echo", {"text": "x"}))
    oryxos_model_server.responder = save_in_between
    loop.run_turn(profile, "go")
    first, second = oryxos_model_server.requests[0], oryxos_model_server.requests[1]
    assert first["messages"][0] == second["messages"][0]  # one prefix per turn: caches hit
    assert "saved during the turn" not in second["messages"][0]["content"]
    loop.run_turn(profile, "again")  # the next turn sees the new memory
    assert "saved during the turn" in oryxos_model_server.requests[2]["messages"][0]["content"]


def test_an_agent_naming_no_provider_uses_the_default_or_the_only_one(
    oryxos_workspace, oryxos_model_server
):
    """The README's quickstart: init, one provider in config.yaml, talk to the default agent."""
    from oryxos.providers import get_provider

    use_model_server(oryxos_workspace, oryxos_model_server, name="only")
    text = oryxos_workspace.config_file.read_text().replace("default_provider: only\n", "")
    oryxos_workspace.config_file.write_text(text)
    runtime = Runtime.load(oryxos_workspace)
    try:
        assert runtime.config.default_provider is None
        profile = runtime.agents.load("default")  # the template names no provider
        assert profile.provider.name is None
        oryxos_model_server.script(Reply.answer("hello from the only provider"))
        assert runtime.loop.run_turn(profile, "hi").answer == "hello from the only provider"
    finally:
        runtime.close()
    oryxos_workspace.config_file.write_text(
        oryxos_workspace.config_file.read_text().replace(
            "providers:\n", "providers:\n  second:\n    model: openai/x\n", 1
        )
    )
    runtime = Runtime.load(oryxos_workspace)
    try:
        with pytest.raises(ConfigError, match="no default_provider .configured: only, second."):
            get_provider(runtime, None)
    finally:
        runtime.close()


def test_turns_of_two_processes_on_one_session_are_both_kept(make_loop, oryxos_model_server):
    # Two runtimes on one workspace: each has its own database connection and its own session
    # locks, as two processes (oryxos chat while oryxos serve runs) have.
    first, second = make_loop(), make_loop()
    assert first.runtime.sessions is not second.runtime.sessions

    def respond(body):
        text = body["messages"][-1]["content"]
        reply = Reply.answer(f"done: {text}")
        return reply.after(0.8) if text == "slow" else reply

    oryxos_model_server.responder = respond
    slow_profile, fast_profile = agent(first), agent(second)
    second.run_turn(fast_profile, "before", session_id="shared")
    slow: dict = {}
    thread = threading.Thread(
        target=lambda: slow.update(r=first.run_turn(slow_profile, "slow", session_id="shared"))
    )
    thread.start()
    time.sleep(0.3)  # the slow turn has read the session and waits for the model
    assert second.run_turn(fast_profile, "fast", session_id="shared").answer == "done: fast"
    thread.join(10)
    assert slow["r"].answer == "done: slow"
    stored = first.runtime.sessions.get("shared")
    assert [m["content"] for m in stored.messages] == [
        "before", "done: before", "fast", "done: fast", "slow", "done: slow",
    ]  # fmt: skip
    # The next turn in either process continues from the merged history.
    third = first.run_turn(slow_profile, "after", session_id="shared")
    assert third.answer == "done: after"
    assert len(second.runtime.sessions.get("shared").messages) == 8


def test_a_streamed_turn_gives_text_events_and_the_same_result(make_loop, oryxos_model_server):
    loop = make_loop()
    profile = agent(loop)
    oryxos_model_server.script(
        Reply.tool("echo", {"text": "hi"}), Reply.answer("The echo said echo:hi.")
    )
    events: list[tuple[str, dict]] = []
    result = loop.run_turn(
        profile, "go", session_id="st", on_event=lambda k, d: events.append((k, d)), stream=True
    )
    assert result.success and result.answer == "The echo said echo:hi."
    texts = [d for k, d in events if k == "text"]
    assert "".join(d["delta"] for d in texts) == result.answer and len(texts) == 4
    assert {d["iteration"] for d in texts} == {2}  # the first reply was a tool call, no text
    kinds = [k for k, _ in events if k != "text"]
    assert kinds == ["thinking", "tool_call", "tool_result", "thinking"]
    rows = llm_rows(loop.runtime, session_id="st")
    assert len(rows) == 2 and all(r.success and r.total_tokens > 0 for r in rows)
    # Without stream=True (the API, one-shot chat) the same turn asks for no stream.
    oryxos_model_server.script(Reply.answer("whole"))
    assert loop.run_turn(profile, "again", session_id="st", on_event=lambda k, d: None).answer == (
        "whole"
    )
    assert "stream" not in oryxos_model_server.requests[-1]
