"""Notify channels: the registry of named delivery targets and the adapter contract.

A notify channel is a stored record (``notify_channels`` table): a slug ``name``, a ``type``
that names an adapter, the ``url`` to deliver to and an optional ``secret`` — a ``${VAR}``
reference resolved from the environment at delivery time, or a stored value. Agents refer to a
channel by name only; the name is resolved on every delivery, so adding or repointing a channel
needs no agent change. The secret never leaves this module: listings use
:meth:`NotifyService.describe` (the variable name at most), and every resolved value is added to
the log mask.

Adapters come from plugins through ``oryxos_register_notify_adapters`` (channel type →
adapter). The kernel owns validation, name resolution and the retry policy (one more attempt
when a delivery says it may succeed on a second try: HTTP 5xx, timeout, no connection); an
adapter only turns one ``(channel, content)`` into the vendor's request and reads the reply.
"""

from __future__ import annotations

import logging
import os
import re
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlsplit

from oryxos.errors import ConfigError, NotFoundError, Problem, StartupError, UsageError
from oryxos.secrets import mask, mask_url, register_secret, url_secrets
from oryxos.storage import NotifyChannelRecord

if TYPE_CHECKING:
    from oryxos.registry import Registry
    from oryxos.runtime import Runtime

log = logging.getLogger("oryxos.notify")

#: A channel name: lower-case letters, digits, '-' and '_', starting with a letter or digit.
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
#: A secret stored as exactly ``${VAR}`` is a reference to the environment variable VAR.
SECRET_REF_PATTERN = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DESCRIPTION_MAX = 500


class _Unset:
    """Marks an argument of :meth:`NotifyService.update` that was not given."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Delivery:
    """What one delivery attempt (or, from the service, all attempts) came to.

    :param ok: the vendor accepted the message (its documented success code, not only HTTP 200).
    :param detail: for people and the model: what was sent or what went wrong, with the
        vendor's own message when there is one. Never contains the secret.
    :param retryable: a second attempt of the same request may succeed (HTTP 5xx, a timeout,
        no connection). The service retries such a delivery once.
    :param status_code: the HTTP status of the (last) reply, None when there was none.
    :param attempts: how many requests the service made (set by the service).
    """

    ok: bool
    detail: str = ""
    retryable: bool = False
    status_code: int | None = None
    attempts: int = 1


@runtime_checkable
class NotifyAdapter(Protocol):
    """Turns a channel and a message into one vendor request; registered per channel type."""

    def deliver(
        self, channel: NotifyChannelRecord, content: str, *, secret: str | None, timeout: float
    ) -> Delivery:
        """Send ``content`` to ``channel.url`` and report the vendor's verdict.

        ``secret`` is the resolved signing secret (None when the channel has none); ``timeout``
        bounds each HTTP request in seconds. Report failures as a :class:`Delivery` with
        ``ok=False`` (exceptions are caught and reported too, but say less).
        """
        ...


def secret_variable(secret: str | None) -> str | None:
    """The environment variable a stored secret refers to, or None for a literal / no secret."""
    if not secret:
        return None
    match = SECRET_REF_PATTERN.match(secret)
    return match.group(1) if match else None


def secret_from_env(variable: str) -> str:
    """The stored form of a secret read from ``variable`` at delivery time: ``${VARIABLE}``."""
    if not ENV_NAME_PATTERN.match(variable or ""):
        raise UsageError(
            f"secret variable {variable!r} is not an environment variable name "
            "(letters, digits and '_', not starting with a digit)"
        )
    return "${" + variable + "}"


def check_name(name: str) -> str:
    """A valid channel name, or a UsageError saying what a name looks like."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise UsageError(
            f"notify channel name {name!r} is not a slug: use 1-64 lower-case letters, digits, "
            "'-' or '_', starting with a letter or digit (e.g. team-lark)"
        )
    return name


def check_url(url: str) -> str:
    """A valid delivery URL (http or https with a host), or a UsageError naming the problem."""
    if not isinstance(url, str) or not url.strip():
        raise UsageError("notify channel url is empty; expected an http(s) URL")
    url = url.strip()
    if any(ch.isspace() for ch in url):
        raise UsageError(f"notify channel url {url!r} contains white space")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError as err:
        raise UsageError(f"notify channel url {url!r} is malformed: {err}") from None
    if parts.scheme not in ("http", "https"):
        raise UsageError(
            f"notify channel url {url!r} must start with https:// or http:// "
            f"(got {parts.scheme + ':' if parts.scheme else 'no scheme'})"
        )
    if not host:
        raise UsageError(f"notify channel url {url!r} has no host")
    if parts.username or parts.password:
        raise UsageError(
            f"notify channel url for host {host!r} carries a user name or password; "
            "use the channel secret instead"
        )
    return url


class NotifyService:
    """The channel registry (validated CRUD on ``runtime.storage.notify_channels``) and delivery.

    Reached as ``runtime.notify``. The REST API, the CLI and the ``notify`` tool all go through
    it, so validation and secret handling are the same everywhere.
    """

    def __init__(self, runtime: Runtime):
        self.runtime = runtime
        self._checked_adapters = False

    # Adapters -------------------------------------------------------------------------------

    @property
    def adapters(self) -> Registry[Any]:
        """Channel type → adapter (an adapter without ``deliver`` is a StartupError)."""
        registry = self.runtime.notify_adapters
        if not self._checked_adapters:
            for type_name, adapter in registry.items():
                if not callable(getattr(adapter, "deliver", None)):
                    raise StartupError(
                        f"plugin {registry.owner(type_name)}: notify channel type {type_name!r} "
                        f"is registered with {type(adapter).__name__}, which has no deliver() "
                        "method"
                    )
            self._checked_adapters = True
        return registry

    def types(self) -> list[str]:
        """The channel types some loaded plugin can deliver to."""
        return self.adapters.names()

    def check_type(self, type_name: str) -> str:
        """A registered channel type, or a UsageError listing the known ones."""
        if type_name not in self.adapters:
            known = ", ".join(self.types()) or "none (is the notify plugin disabled?)"
            raise UsageError(f"unknown notify channel type {type_name!r} (known types: {known})")
        return type_name

    # Registry -------------------------------------------------------------------------------

    @property
    def _store(self) -> Any:
        return self.runtime.storage.notify_channels

    def list(self) -> list[NotifyChannelRecord]:
        """Every channel, by name. The records hold secrets: show them with :meth:`describe`."""
        return self._store.list()

    def names(self) -> list[str]:
        return [record.name for record in self.list()]

    def get(self, name: str) -> NotifyChannelRecord:
        """The channel called ``name``, or a NotFoundError listing the registered names."""
        record = self._store.get(name) if isinstance(name, str) else None
        if record is None:
            names = self.names()
            known = (
                f"registered channels: {', '.join(names)}"
                if names
                else "no channel is registered; add one with 'oryxos notify add'"
            )
            raise NotFoundError(f"no notify channel named {name!r} ({known})")
        return record

    def add(
        self,
        name: str,
        type: str,
        url: str,
        *,
        secret: str | None = None,
        description: str | None = None,
    ) -> NotifyChannelRecord:
        """Register a channel; UsageError for an invalid field, ConflictError for a taken name.

        ``secret`` is either ``${VAR}`` (see :func:`secret_from_env`) or the value itself.
        """
        record = NotifyChannelRecord(
            name=check_name(name),
            type=self.check_type(type),
            url=check_url(url),
            secret=self._check_secret(secret),
            description=self._check_description(description),
        )
        created = self._store.create(record)
        log.info("notify channel %s added (type %s)", created.name, created.type)
        return created

    def update(
        self,
        name: str,
        *,
        type: str | None = None,
        url: str | None = None,
        secret: Any = UNSET,
        description: Any = UNSET,
    ) -> NotifyChannelRecord:
        """Change fields of a channel; ``secret=None`` / ``description=None`` clear them.

        A ``url`` equal to the masked form listings show (see :func:`oryxos.secrets.mask_url`)
        leaves the URL as it is, so an edit form can send back what it was given.
        """
        current = self.get(name)
        changes: dict[str, Any] = {}
        if type is not None:
            changes["type"] = self.check_type(type)
        if url is not None and url != mask_url(current.url):  # the masked URL as shown = unchanged
            changes["url"] = check_url(url)
        if secret is not UNSET:
            changes["secret"] = self._check_secret(secret)
        if description is not UNSET:
            changes["description"] = self._check_description(description)
        if not changes:
            raise UsageError(f"nothing to change for notify channel {name!r}")
        updated = self._store.update(name, **changes)
        log.info("notify channel %s updated (%s)", name, ", ".join(sorted(changes)))
        return updated

    def remove(self, name: str) -> None:
        """Delete a channel; NotFoundError (listing the names) if there is none."""
        self.get(name)
        self._store.delete(name)
        log.info("notify channel %s removed", name)

    @staticmethod
    def describe(record: NotifyChannelRecord) -> dict[str, Any]:
        """What listings, the CLI and the API may show: no secret, at most its variable name."""
        out = record.public_dict()
        variable = secret_variable(record.secret)
        out["secret"] = "${" + variable + "}" if variable else ("stored" if record.secret else None)
        return out

    @staticmethod
    def _check_secret(secret: str | None) -> str | None:
        if secret is None or secret == "":
            return None
        if not isinstance(secret, str):
            raise UsageError("a notify channel secret must be a string")
        if "${" in secret and not SECRET_REF_PATTERN.match(secret):
            raise UsageError(
                "a notify channel secret is either exactly ${VARIABLE} (read from the "
                "environment when a message is sent) or the secret value itself"
            )
        return secret

    @staticmethod
    def _check_description(description: str | None) -> str | None:
        if description is None:
            return None
        description = str(description).strip()
        if len(description) > DESCRIPTION_MAX:
            raise UsageError(
                f"notify channel description is {len(description)} characters; "
                f"at most {DESCRIPTION_MAX} are allowed"
            )
        return description or None

    # Delivery -------------------------------------------------------------------------------

    def resolve_secret(self, record: NotifyChannelRecord) -> str | None:
        """The channel's secret value (masked in logs from now on); ConfigError if its
        variable is unset."""
        variable = secret_variable(record.secret)
        if variable is None:
            value = record.secret or None
        else:
            value = os.environ.get(variable) or None
            if value is None:
                raise ConfigError(
                    [
                        Problem(
                            f"notify channel {record.name!r}",
                            "secret",
                            f"environment variable {variable} is not set",
                        )
                    ]
                )
        register_secret(value)
        return value

    def send(self, name: str, content: str, *, timeout: float | None = None) -> Delivery:
        """Resolve ``name`` now and deliver ``content`` to it.

        Raises an OryxError for what no retry can fix — no such channel (NotFoundError naming
        the registered ones), a type no loaded plugin provides, an unset secret variable, empty
        content; returns a :class:`Delivery` for everything the vendor said or did.
        """
        return self.deliver(self.get(name), content, timeout=timeout)

    def deliver(
        self, record: NotifyChannelRecord, content: str, *, timeout: float | None = None
    ) -> Delivery:
        """Deliver to a channel record (see :meth:`send`), retrying once a retryable failure."""
        if not isinstance(content, str) or not content.strip():
            raise UsageError("the message to send is empty")
        if record.type not in self.adapters:
            known = ", ".join(self.types()) or "none"
            raise NotFoundError(
                f"notify channel {record.name!r} has type {record.type!r}, which no loaded "
                f"plugin provides (known types: {known})"
            )
        adapter = self.adapters.get(record.type)
        for part in url_secrets(record.url):  # vendor errors may echo the URL into logs
            register_secret(part)
        secret = self.resolve_secret(record)
        settings = self.runtime.config.notify
        timeout = settings.timeout_seconds if timeout is None else timeout
        started = time.monotonic()
        delivery = Delivery(False, "not attempted")
        attempts = 0
        for attempts in range(1, settings.retries + 2):
            delivery = self._attempt(adapter, record, content, secret, timeout)
            if delivery.ok or not delivery.retryable:
                break
            log.info(
                "notify %s: attempt %d failed (%s)",
                record.name,
                attempts,
                mask(delivery.detail),
            )
        delivery = replace(delivery, detail=mask(delivery.detail), attempts=attempts)
        elapsed = int((time.monotonic() - started) * 1000)
        if delivery.ok:
            log.info(
                "notify %s (%s): delivered in %d ms: %s",
                record.name,
                record.type,
                elapsed,
                delivery.detail,
            )
        else:
            log.warning(
                "notify %s (%s): failed after %d attempt(s), %d ms: %s",
                record.name,
                record.type,
                attempts,
                elapsed,
                delivery.detail,
            )
        return delivery

    @staticmethod
    def _attempt(
        adapter: Any,
        record: NotifyChannelRecord,
        content: str,
        secret: str | None,
        timeout: float,
    ) -> Delivery:
        try:
            delivery = adapter.deliver(record, content, secret=secret, timeout=timeout)
        except Exception as err:  # an adapter bug must not end the turn with a traceback
            log.warning("notify adapter %r raised", record.type, exc_info=True)
            return Delivery(False, f"{record.type} adapter failed: {type(err).__name__}: {err}")
        if not isinstance(delivery, Delivery):
            return Delivery(
                False,
                f"{record.type} adapter returned {type(delivery).__name__}, not a Delivery",
            )
        return delivery
