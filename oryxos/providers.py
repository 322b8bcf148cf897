"""LLM providers: the protocol a provider plugin implements, and the retry/audit policy around it.

A provider (registered by a plugin through ``oryxos_register_providers``) only sends messages
and returns the model's reply; it never runs tools and never retries. :class:`ProviderClient`
owns the policy: exponential backoff with jitter on 429, 5xx, timeouts and connection errors
(``providers.<name>.max_retries``, default 2), honouring ``Retry-After``, an optional fallback
provider, and — for EVERY attempt, successful, failed or retried — an ``llm_calls`` audit row and
the ``oryxos_after_llm_call`` hook. Keeping this in the kernel means a third-party provider gets
retries and audit for free and cannot forget them.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from oryxos.errors import ConfigError, NotFoundError, OryxError, Problem

if TYPE_CHECKING:
    from oryxos.runtime import Runtime
    from oryxos.secrets import SecretRef

log = logging.getLogger("oryxos.providers")

#: HTTP statuses worth another attempt: rate limits, timeouts and server-side failures.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
#: The longest we wait before a retry, whatever Retry-After says.
MAX_RETRY_DELAY = 60.0


class ProviderToolCall(NamedTuple):
    """One tool call requested by the model. ``arguments`` is the raw JSON string it sent."""

    id: str
    name: str
    arguments: str


@dataclass
class Usage:
    """Token counts of one or more provider calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass
class ProviderResponse:
    """The model's reply: text, tool calls (possibly several), usage and the model that answered.

    Decide on ``tool_calls``, never on a finish reason: some providers report "stop" with tool
    calls present.
    """

    content: str | None
    tool_calls: list[ProviderToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    def assistant_message(self) -> dict[str, Any]:
        """The reply as an OpenAI-format assistant message for the conversation history."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


class ProviderError(OryxError):
    """A provider call failed. ``retryable`` says whether another attempt may succeed."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status_code: int | None = None,
        retry_after: float | None = None,
        provider: str | None = None,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.status_code = status_code
        self.retry_after = retry_after
        self.provider = provider


def is_retryable_status(status: int | None) -> bool:
    """429, 408 and friends, and every 5xx."""
    return status is not None and (status in RETRYABLE_STATUSES or status >= 500)


def parse_retry_after(value: str | float | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None if unusable."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@runtime_checkable
class Provider(Protocol):
    """What a provider plugin registers. ``name`` is its key under ``providers:`` in config."""

    name: str
    model: str
    max_retries: int
    # Optional, so not a protocol member: ``streams = True`` says that ``complete`` accepts
    # ``on_text``, a callable given each piece of the reply's text as it arrives (streaming);
    # ProviderClient passes it only to providers that say so.

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        *,
        model: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
        **params: Any,
    ) -> ProviderResponse:
        """Send one request (no retries); raise :class:`ProviderError` on failure."""
        ...

    def check(self, api_key: SecretRef | None = None) -> None:
        """Raise a clear ConfigError if the provider cannot be called (e.g. key variable unset)."""
        ...


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter: ``backoff * 2**(n-1)`` plus up to ``backoff`` random."""

    max_retries: int = 2
    backoff: float = 0.5
    max_delay: float = MAX_RETRY_DELAY

    def delay(self, attempt: int, err: ProviderError) -> float:
        """Seconds to wait after failed ``attempt`` (1-based); Retry-After wins when given."""
        if err.retry_after is not None:
            return min(err.retry_after, self.max_delay)
        base = self.backoff * 2 ** (attempt - 1)
        return min(base + random.uniform(0, self.backoff), self.max_delay)


def get_provider(runtime: Runtime, name: str | None, *, where: str = "") -> Provider:
    """The provider called ``name``, else ``default_provider``, else the only one configured;
    a clear error before any call if there is none."""
    configured_names = sorted(runtime.config.providers)
    name = name or runtime.config.default_provider
    if not name and len(configured_names) == 1:
        name = configured_names[0]  # one provider configured: no need to name it twice
    if not name:
        raise ConfigError(
            [
                Problem(
                    where or runtime.config.source or "config.yaml",
                    "provider.name",
                    "no provider named, and config.yaml has no default_provider"
                    + (
                        f" (configured: {', '.join(configured_names)})"
                        if configured_names
                        else " and no providers"
                    ),
                )
            ]
        )
    if name not in runtime.providers:
        configured = ", ".join(sorted(runtime.config.providers)) or "none"
        hint = (
            "add it under providers: in config.yaml"
            if name not in runtime.config.providers
            else "it is configured but no provider plugin registered it (is oryxos_litellm "
            "disabled?)"
        )
        raise NotFoundError(
            f"{where + ': ' if where else ''}unknown provider {name!r} "
            f"(configured: {configured}); {hint}"
        )
    return runtime.providers.get(name)


class _Stream:
    """The text callbacks of one ``ProviderClient.complete``; remembers whether text was given."""

    def __init__(
        self, on_text: Callable[[str], None] | None, on_discard: Callable[[], None] | None
    ):
        self.on_text, self.on_discard = on_text, on_discard
        self.given = False

    @property
    def wanted(self) -> bool:
        return self.on_text is not None

    def text(self, piece: str) -> None:
        if piece and self.on_text is not None:
            self.given = True
            self.on_text(piece)

    def discard(self) -> None:
        if self.given:
            self.given = False
            if self.on_discard is not None:
                self.on_discard()


class ProviderClient:
    """Calls a provider with OryxOS's retry policy, audit rows and hook; one per agent turn/loop.

    :param sleep: how to wait between attempts (tests may record instead of sleeping).
    """

    def __init__(
        self,
        runtime: Runtime,
        provider: Provider,
        *,
        fallback: Provider | None = None,
        api_key: SecretRef | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.runtime = runtime
        self.provider = provider
        self.fallback = fallback
        self.api_key = api_key
        self.sleep = sleep

    def check(self) -> None:
        """Fail before any call if a provider is not usable (its key variable unset, ...)."""
        for provider in (self.provider, self.fallback):
            if provider is not None and hasattr(provider, "check"):
                provider.check(self.api_key if provider is self.provider else None)

    def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        *,
        model: str | None = None,
        temperature: float | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        on_text: Callable[[str], None] | None = None,
        on_discard: Callable[[], None] | None = None,
    ) -> ProviderResponse:
        """One model reply, retried as the policy says; the fallback provider if all fail.

        ``on_text`` receives the reply's text piece by piece as it arrives, when the provider
        streams (``streams = True``); otherwise it is not called and the reply comes whole.
        When an attempt fails after some text was given and another attempt follows,
        ``on_discard`` is called first: that text is void.
        """
        stream = _Stream(on_text, on_discard)
        try:
            return self._with_retries(
                self.provider, messages, tools, model, temperature, session_id, agent, stream
            )
        except ProviderError as err:
            if self.fallback is None:
                raise
            log.warning(
                "provider %s failed (%s); trying %s", self.provider.name, err, self.fallback.name
            )
            stream.discard()
            return self._with_retries(
                self.fallback, messages, tools, None, temperature, session_id, agent, stream
            )

    def _with_retries(
        self,
        provider: Provider,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]] | None,
        model: str | None,
        temperature: float | None,
        session_id: str | None,
        agent: str | None,
        stream: _Stream | None = None,
    ) -> ProviderResponse:
        policy = RetryPolicy(
            max_retries=int(getattr(provider, "max_retries", 2)),
            backoff=float(getattr(provider, "retry_backoff", 0.5)),
        )
        api_key = None
        if provider is self.provider and self.api_key is not None:
            api_key = self.api_key.resolve()
        used_model = model or provider.model
        attempt = 0
        while True:
            attempt += 1
            start = time.perf_counter()
            try:
                kwargs: dict[str, Any] = {"model": model, "temperature": temperature}
                if api_key is not None:
                    kwargs["api_key"] = api_key
                if stream is not None and stream.wanted and getattr(provider, "streams", False):
                    kwargs["on_text"] = stream.text
                response = provider.complete(messages, tools, **kwargs)
            except Exception as exc:
                err = _as_provider_error(exc, provider.name)
                self._audit(provider, used_model, start, attempt, session_id, agent, error=err)
                if not err.retryable or attempt > policy.max_retries:
                    if attempt > 1:
                        raise ProviderError(
                            f"{err} (after {attempt} attempts)",
                            retryable=err.retryable,
                            status_code=err.status_code,
                            provider=provider.name,
                        ) from exc
                    raise err from exc
                if stream is not None:
                    stream.discard()  # the next attempt starts the reply again
                delay = policy.delay(attempt, err)
                log.info(
                    "provider %s attempt %d failed (%s); retrying in %.2fs",
                    provider.name,
                    attempt,
                    err,
                    delay,
                )
                self.sleep(delay)
                continue
            self._audit(
                provider,
                response.model or used_model,
                start,
                attempt,
                session_id,
                agent,
                usage=response.usage,
            )
            return response

    def _audit(
        self,
        provider: Provider,
        model: str,
        start: float,
        attempt: int,
        session_id: str | None,
        agent: str | None,
        *,
        usage: Usage | None = None,
        error: ProviderError | None = None,
    ) -> None:
        from oryxos.storage import LlmCallRecord

        usage = usage or Usage()
        record = LlmCallRecord(
            provider=provider.name,
            model=model,
            success=error is None,
            duration_ms=int((time.perf_counter() - start) * 1000),
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            total_tokens=usage.total_tokens,
            error_message=str(error) if error is not None else None,
            session_id=session_id,
            agent=agent,
            attempt=attempt,
        )
        try:
            self.runtime.storage.audit.record_llm_call(record)
        except Exception:  # audit must not hide the model's answer; the log keeps the failure
            log.error("cannot write the llm_calls audit row", exc_info=True)
        try:
            self.runtime.pm.hook.oryxos_after_llm_call(record=record)
        except Exception:
            log.error("an oryxos_after_llm_call hook failed", exc_info=True)


def _as_provider_error(exc: Exception, provider: str) -> ProviderError:
    if isinstance(exc, ProviderError):
        exc.provider = exc.provider or provider
        return exc
    if isinstance(exc, OryxError):  # a configuration problem found at call time
        return ProviderError(str(exc), retryable=False, provider=provider)
    return ProviderError(
        f"provider {provider}: unexpected error: {type(exc).__name__}: {exc}",
        retryable=False,
        provider=provider,
    )
