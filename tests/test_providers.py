"""The provider retry policy and the litellm provider's error classification."""

from __future__ import annotations

import socket
from email.utils import formatdate
from time import time

import pytest

from oryxos.config import ProviderConfig
from oryxos.providers import ProviderError, RetryPolicy, parse_retry_after
from oryxos.testing import Reply


def test_backoff_is_exponential_with_jitter_and_retry_after_wins():
    policy = RetryPolicy(max_retries=3, backoff=1.0, max_delay=10)
    plain = ProviderError("x", retryable=True)
    for attempt, base in ((1, 1.0), (2, 2.0), (3, 4.0)):
        delays = {policy.delay(attempt, plain) for _ in range(20)}
        assert all(base <= d <= base + 1.0 for d in delays) and len(delays) > 1
    assert policy.delay(5, plain) == 10  # capped
    assert policy.delay(1, ProviderError("x", retry_after=3.5)) == 3.5
    assert policy.delay(1, ProviderError("x", retry_after=999)) == 10


def test_retry_after_accepts_seconds_and_http_dates():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert 8 <= parse_retry_after(formatdate(time() + 10, usegmt=True)) <= 10


def _provider(url, **settings):
    from oryxos_litellm.provider import LiteLLMProvider

    return LiteLLMProvider("t", ProviderConfig(model="openai/m", api_base=url, api_key="sk-t",
                                               **settings))  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "retryable", "status"),
    [
        (Reply.error(429, retry_after=7), True, 429),
        (Reply.error(500), True, 500),
        (Reply.error(503), True, 503),
        (Reply.error(400), False, 400),
        (Reply.error(401), False, 401),
    ],
)
def test_http_errors_are_classified(oryxos_model_server, reply, retryable, status):
    oryxos_model_server.script(reply)
    with pytest.raises(ProviderError) as caught:
        _provider(oryxos_model_server.url).complete([{"role": "user", "content": "x"}], None)
    assert caught.value.retryable is retryable and caught.value.status_code == status
    assert caught.value.retry_after == (7 if status == 429 else None)
    assert str(caught.value).startswith(f"provider t: HTTP {status}")


def test_a_refused_connection_is_retryable_and_not_retried_by_litellm():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    provider = _provider(f"http://127.0.0.1:{port}/v1")
    import time as clock

    start = clock.perf_counter()
    with pytest.raises(ProviderError) as caught:
        provider.complete([{"role": "user", "content": "x"}], None)
    assert caught.value.retryable
    assert clock.perf_counter() - start < 1.0  # num_retries=0: the OpenAI client's retries are off
    # litellm reports it as an HTTP 500 "InternalServerError"; say what happened instead
    message = str(caught.value)
    assert message.startswith(f"provider t: cannot connect to http://127.0.0.1:{port}/v1")
    assert "HTTP 500" not in message


def test_tool_calls_are_read_from_the_message_not_the_finish_reason(oryxos_model_server):
    oryxos_model_server.script(Reply(content="thinking", tool_calls=[("echo", '{"a": 1}')]))
    response = _provider(oryxos_model_server.url).complete(
        [{"role": "user", "content": "x"}],
        [{"type": "function", "function": {"name": "echo", "parameters": {"type": "object"}}}],
    )
    assert response.content == "thinking"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("echo", '{"a": 1}')]
    sent = oryxos_model_server.requests[0]
    assert sent["model"] == "m" and sent["tools"][0]["function"]["name"] == "echo"


def _logging_submissions(monkeypatch) -> list:
    """Record what litellm hands to its background logging executor (and run it inline)."""
    from oryxos_litellm.provider import load_litellm

    executor = load_litellm().utils.executor
    submitted: list = []
    real_submit = executor.submit

    def submit(fn, *args, **kwargs):
        submitted.append(fn)
        return real_submit(fn, *args, **kwargs)

    monkeypatch.setattr(executor, "submit", submit)
    return submitted


def test_litellm_success_logging_is_skipped_when_no_callback_consumes_it(
    oryxos_model_server, monkeypatch
):
    # litellm would build a logging payload in a background thread after every call; with no
    # litellm callback configured nobody reads it, and it competes with the turn for the GIL.
    submitted = _logging_submissions(monkeypatch)
    oryxos_model_server.script(Reply.answer("hi"), Reply.answer("again"))
    provider = _provider(oryxos_model_server.url)
    assert provider.complete([{"role": "user", "content": "x"}], None).content == "hi"
    assert provider.complete([{"role": "user", "content": "y"}], None).content == "again"
    assert submitted == []


def test_litellm_callbacks_still_see_every_call_when_configured(oryxos_model_server, monkeypatch):
    import threading

    from litellm.integrations.custom_logger import CustomLogger
    from oryxos_litellm.provider import load_litellm

    seen = threading.Event()

    class Recorder(CustomLogger):
        def log_success_event(self, kwargs, response_obj, start_time, end_time):
            seen.set()

    submitted = _logging_submissions(monkeypatch)
    monkeypatch.setattr(load_litellm(), "callbacks", [Recorder()])
    oryxos_model_server.script(Reply.answer("hi"))
    assert (
        _provider(oryxos_model_server.url)
        .complete([{"role": "user", "content": "x"}], None)
        .content
        == "hi"
    )
    assert len(submitted) == 1
    assert seen.wait(10), "the configured litellm callback was not called"


def test_a_streamed_reply_arrives_in_pieces_and_whole(oryxos_model_server):
    oryxos_model_server.script(
        Reply(content="Checking the time now.", tool_calls=[("current_time", '{"tz": "UTC"}')])
    )
    pieces: list[str] = []
    response = _provider(oryxos_model_server.url).complete(
        [{"role": "user", "content": "x"}], None, on_text=pieces.append
    )
    assert len(pieces) == 4 and "".join(pieces) == "Checking the time now."
    assert response.content == "Checking the time now."
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("current_time", '{"tz": "UTC"}')
    ]
    assert response.usage.total_tokens > 0  # asked for with stream_options.include_usage
    body = oryxos_model_server.requests[-1]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_text_of_a_failed_attempt_is_discarded_before_the_retry(oryxos_workspace):
    from oryxos.providers import ProviderClient, ProviderResponse
    from oryxos.runtime import Runtime

    class HalfThenWhole:
        """Streams half a reply then breaks (retryable); the second attempt is whole."""

        name, model, max_retries, retry_backoff, streams = "half", "m", 2, 0.0, True
        attempts = 0

        def complete(self, messages, tools, *, on_text=None, **kwargs):
            if on_text is None:
                return ProviderResponse(content="not streamed", tool_calls=[])
            self.attempts += 1
            on_text("Hel")
            if self.attempts == 1:
                raise ProviderError("connection reset", retryable=True)
            on_text("lo")
            return ProviderResponse(content="Hello", tool_calls=[])

    runtime = Runtime.load(oryxos_workspace)
    events: list[str] = []
    try:
        client = ProviderClient(runtime, HalfThenWhole(), sleep=lambda s: None)
        response = client.complete(
            [{"role": "user", "content": "x"}],
            None,
            on_text=events.append,
            on_discard=lambda: events.append("<discard>"),
        )
        plain = ProviderClient(runtime, HalfThenWhole(), sleep=lambda s: None)
        unasked = plain.complete([{"role": "user", "content": "x"}], None)
        assert unasked.content == "not streamed"  # no on_text given: the provider gets none
    finally:
        runtime.close()
    assert response.content == "Hello"
    assert events == ["Hel", "<discard>", "Hel", "lo"]


@pytest.mark.parametrize(
    ("model", "asked"),
    [
        ("openai/gpt-4o-mini", True),
        ("deepseek/deepseek-chat", True),
        ("ollama_chat/qwen2.5", False),
    ],
)
def test_token_usage_is_asked_for_in_a_stream_only_where_litellm_sends_it(model, asked):
    # litellm refuses stream_options for providers that do not take it (Ollama): such a request
    # would fail, so usage is then counted by litellm's chunk builder instead.
    from oryxos_litellm.provider import _usage_in_stream, load_litellm

    assert _usage_in_stream(load_litellm(), model) is asked
