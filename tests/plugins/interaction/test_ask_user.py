"""ask_user: only in interactive contexts, answered through ctx.extra["ask_user"]."""

from __future__ import annotations

from oryxos_interaction import ASK_USER_KEY


def test_ask_user_is_listed_only_when_interactive(oryxos_runtime):
    catalog = oryxos_runtime.catalog
    wanted = ["ask_user", "current_time"]
    chat = catalog.context(interactive=True)
    rest = catalog.context(interactive=False, channel="rest")
    assert catalog.tool_names(wanted, chat) == ["ask_user", "current_time"]
    assert catalog.tool_names(wanted, rest) == ["current_time"]
    assert [t.name for t in catalog.build_tools(wanted, rest)] == ["current_time"]
    assert catalog.select(wanted, rest).unavailable == {"ask_user": "is_interactive is false"}


def test_ask_user_returns_the_answer_from_the_channel_callable(oryxos_runtime):
    asked = []

    def ask(question):
        asked.append(question)
        return "  blue  "

    ctx = oryxos_runtime.catalog.context(interactive=True, extra={ASK_USER_KEY: ask})
    tool = oryxos_runtime.catalog.build("ask_user", ctx)
    result = tool.execute({"question": "Favourite colour?"}, ctx)
    assert result.success and result.content == "blue"
    assert asked == ["Favourite colour?"]


def test_ask_user_without_a_callable_fails_clearly(oryxos_runtime):
    ctx = oryxos_runtime.catalog.context(interactive=True)
    result = oryxos_runtime.catalog.build("ask_user", ctx).execute({"question": "?"}, ctx)
    assert not result.success and not result.retryable
    assert "ctx.extra['ask_user']" in result.error_message


def test_ask_user_when_the_user_declines(oryxos_runtime):
    def ask(question):
        raise EOFError

    ctx = oryxos_runtime.catalog.context(interactive=True, extra={ASK_USER_KEY: ask})
    result = oryxos_runtime.catalog.build("ask_user", ctx).execute({"question": "Go on?"}, ctx)
    assert not result.success and result.error_message == "ask_user: the user did not answer"


def test_empty_question_is_retryable(oryxos_runtime):
    ctx = oryxos_runtime.catalog.context(interactive=True, extra={ASK_USER_KEY: lambda q: "x"})
    result = oryxos_runtime.catalog.build("ask_user", ctx).execute({"question": " "}, ctx)
    assert not result.success and result.retryable
