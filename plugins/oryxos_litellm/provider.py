"""A :class:`oryxos.providers.Provider` on litellm: sends messages, returns text and tool calls.

litellm never runs tools and never retries here (``num_retries=0``): the kernel's
ProviderClient owns retries, backoff and audit. This module imports only the standard library
and ``oryxos`` at its top; litellm is imported by :func:`load_litellm` on first use.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from oryxos.providers import (
    ProviderError,
    ProviderResponse,
    ProviderToolCall,
    Usage,
    is_retryable_status,
    parse_retry_after,
)

if TYPE_CHECKING:
    from oryxos.config import ProviderConfig
    from oryxos.secrets import SecretRef

log = logging.getLogger("oryxos.litellm")

#: Set before litellm is imported: no price-map download, no .env loading, no debug chatter.
LITELLM_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_OFFLINE_MODE": "true",
    "LITELLM_MODE": "PRODUCTION",
}

_import_lock = threading.Lock()
_litellm: Any = None
_unlogged_call: Callable[[], AbstractContextManager[Any]] | None = None

#: litellm's callback lists: when all are empty nothing consumes its success logging.
LITELLM_CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "input_callback",
    "service_callback",
    "_async_success_callback",
    "_async_failure_callback",
    "_async_input_callback",
)


def load_litellm() -> Any:
    """Import litellm once, quietly and offline; thread-safe (chat preloads it in a thread)."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            for key, value in LITELLM_ENV.items():
                os.environ.setdefault(key, value)
            import litellm

            litellm.suppress_debug_info = True
            _find_unlogged_call()
            # litellm adds its own stderr handlers; our logging configuration handles its records.
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logger = logging.getLogger(name)
                for handler in list(logger.handlers):
                    logger.removeHandler(handler)
                logger.propagate = True
            _litellm = litellm
    return _litellm


def _find_unlogged_call() -> None:
    """litellm's switch for calls whose success logging someone else does (see below)."""
    global _unlogged_call
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:  # an older or newer litellm: calls are logged by litellm as usual
        log.debug("litellm has no internal_sub_call; its success logging stays on")
        return
    _unlogged_call = internal_sub_call


def success_logging_skipped(litellm: Any) -> AbstractContextManager[Any]:
    """A context in which litellm skips its post-call success logging, if nobody consumes it.

    After every call litellm hands a "success handler" to a background thread: it builds a
    logging payload (costs, model info) for litellm's callbacks. OryxOS registers no callback —
    its audit rows are written by the kernel — so with every callback list empty that work has
    no reader, yet it runs while the turn goes on (the tool, the audit rows, the next request)
    and takes the GIL from it. Then the call runs as litellm's ``internal_sub_call`` (a call
    whose logging another caller does; it changes nothing else). When a plugin or deployment
    has set a litellm callback (Langfuse, OpenTelemetry, ...) the call is logged as usual.
    """
    if _unlogged_call is None or any(getattr(litellm, n, None) for n in LITELLM_CALLBACK_LISTS):
        return nullcontext()
    return _unlogged_call()


def preload() -> threading.Thread:
    """Import litellm in a daemon thread so that the first request does not wait for it."""
    thread = threading.Thread(target=_preload_quietly, name="oryxos-litellm-import", daemon=True)
    thread.start()
    return thread


def _preload_quietly() -> None:
    try:
        load_litellm()
    except Exception:  # the first real call reports the problem
        log.debug("background import of litellm failed", exc_info=True)


class LiteLLMProvider:
    """One ``providers:`` entry: model string, base URL, key reference, timeout, extra params."""

    #: ``complete(on_text=...)`` streams the reply (see :class:`oryxos.providers.Provider`).
    streams = True

    def __init__(self, name: str, config: ProviderConfig):
        self.name = name
        self.config = config
        self.model = config.model
        self.api_base = config.api_base
        self.timeout = config.timeout
        self.max_retries = config.max_retries
        self.retry_backoff = config.retry_backoff

    def __repr__(self) -> str:
        return f"<LiteLLMProvider {self.name} {self.model}>"

    def check(self, api_key: SecretRef | None = None) -> None:
        """A ConfigError naming file, key and variable if the key variable is unset."""
        ref = api_key or self.config.api_key
        if ref is not None and not ref.is_set():
            ref.resolve()  # raises the ConfigError that names the variable

    def warm_up(self) -> None:
        preload()

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        *,
        model: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
        on_text: Callable[[str], None] | None = None,
        **params: Any,
    ) -> ProviderResponse:
        litellm = load_litellm()
        kwargs: dict[str, Any] = {**self.config.params, **params}
        kwargs.update(
            model=model or self.model,
            messages=list(messages),
            timeout=timeout or self.timeout,
            num_retries=0,
        )
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if api_key is None and self.config.api_key is not None:
            api_key = self.config.api_key.resolve()
        if api_key is not None:
            kwargs["api_key"] = api_key
        if tools:
            kwargs["tools"] = list(tools)
        if temperature is not None:
            kwargs["temperature"] = temperature
        try:
            with success_logging_skipped(litellm):
                if on_text is None:
                    response = litellm.completion(**kwargs)
                else:
                    response = _streamed(litellm, kwargs, on_text)
        except Exception as exc:
            raise provider_error(exc, self.name, self.api_base) from exc
        return to_response(response, kwargs["model"])


@functools.lru_cache(maxsize=64)
def _usage_in_stream(litellm: Any, model: str) -> bool:
    """Whether litellm sends ``stream_options`` to this model's provider (else it would refuse)."""
    try:
        _, provider, _, _ = litellm.get_llm_provider(model)
        supported = litellm.get_supported_openai_params(model=model, custom_llm_provider=provider)
    except Exception:  # an unknown provider: do not risk a refused request
        return False
    return "stream_options" in (supported or [])


def _streamed(litellm: Any, kwargs: dict[str, Any], on_text: Callable[[str], None]) -> Any:
    """Stream the reply: each text piece to ``on_text``; the whole reply rebuilt at the end.

    ``stream_options.include_usage`` asks the server for the token counts (the audit row
    needs them) where litellm knows the provider takes it (Ollama does not: litellm then
    counts the tokens itself); ``stream_chunk_builder`` assembles content, tool calls and usage.
    """
    kwargs = {**kwargs, "stream": True}
    if _usage_in_stream(litellm, kwargs["model"]):
        kwargs["stream_options"] = {"include_usage": True}
    chunks = []
    for chunk in litellm.completion(**kwargs):
        chunks.append(chunk)
        choices = getattr(chunk, "choices", None) or []
        piece = getattr(getattr(choices[0], "delta", None), "content", None) if choices else None
        if piece:
            on_text(piece)
    response = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])
    if response is None:
        raise ValueError("the provider streamed no reply")
    return response


def to_response(response: Any, model: str) -> ProviderResponse:
    """litellm's ModelResponse → ProviderResponse (tool calls decided on ``message.tool_calls``)."""
    message = response.choices[0].message
    calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = call.function
        calls.append(
            ProviderToolCall(
                id=call.id or f"call_{index}",
                name=function.name or "",
                arguments=function.arguments or "",
            )
        )
    usage = getattr(response, "usage", None)
    return ProviderResponse(
        content=message.content,
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            total_tokens=int(getattr(usage, "total_tokens", 0) or 0),
        ),
        model=getattr(response, "model", None) or model,
    )


def provider_error(exc: Exception, provider: str, api_base: str | None = None) -> ProviderError:
    """Classify a litellm/openai exception: status code, Retry-After, retryable or not."""
    litellm = load_litellm()
    timeout = isinstance(exc, litellm.Timeout)
    # litellm maps the OpenAI client's "Connection error." to an HTTP 500 InternalServerError
    # for OpenAI-compatible servers; it is a connection failure, not a server answer.
    refused = isinstance(exc, litellm.APIConnectionError) or "Connection error" in str(exc)
    connection = timeout or refused
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    retry_after = None
    for source in (getattr(exc, "response", None), exc):
        headers = getattr(source, "headers", None) or getattr(
            source, "litellm_response_headers", None
        )
        if headers:
            try:
                retry_after = parse_retry_after(headers.get("retry-after"))
            except AttributeError:
                retry_after = None
            if retry_after is not None:
                break
    kind = "timed out" if timeout else type(exc).__name__
    if refused and not timeout:
        kind = f"cannot connect to {api_base}" if api_base else "cannot connect"
        status = None
    detail = str(exc).split("\n")[0][:300]
    status_text = f"HTTP {status} " if status and not connection else ""
    return ProviderError(
        f"provider {provider}: {status_text}{kind}: {detail}",
        retryable=connection or is_retryable_status(status),
        status_code=status,
        retry_after=retry_after,
        provider=provider,
    )
