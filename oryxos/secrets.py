"""Secrets: ``${VAR}`` references resolved from the environment when used, and masked in logs.

A secret field in a file (``api_key``, ``api_token``, ``secret`` ...) keeps what was written —
normally ``${DEEPSEEK_API_KEY}`` — as a :class:`SecretRef`. It is resolved only by the code that
needs the value, so a provider whose key variable is unset is reported as "not configured"
instead of breaking every command. Every resolved value is added to the set that
:class:`oryxos.logs.SecretMaskFilter` removes from log records.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

from oryxos.errors import ConfigError, Problem
from oryxos.yamlfile import MissingVariable, expand_vars, variables_in

#: Keys whose values are secrets wherever they appear in a file people write.
SECRET_KEYS = frozenset({"api_key", "api_token", "secret", "password", "token"})

_known: set[str] = set()
_known_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember a secret value so that log records never show it (values < 4 chars are kept)."""
    if value and len(value) >= 4:
        with _known_lock:
            _known.add(value)


def known_secrets() -> frozenset[str]:
    """Every secret value seen so far in this process."""
    with _known_lock:
        return frozenset(_known)


def mask(text: str, secrets: frozenset[str] | None = None) -> str:
    """Replace each known secret in ``text`` by ``***``."""
    for value in sorted(secrets if secrets is not None else known_secrets(), key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text


class SecretRef:
    """A secret as written in a file: a ``${VAR}`` reference (or, discouraged, a literal)."""

    __slots__ = ("file", "key", "line", "template")

    def __init__(self, template: str, *, file: str = "", key: str = "", line: int | None = None):
        self.template = template
        self.file = file
        self.key = key
        self.line = line

    @property
    def variables(self) -> list[str]:
        """Environment variables the secret comes from (empty for a literal)."""
        return variables_in(self.template)

    @property
    def is_literal(self) -> bool:
        return not self.variables

    def is_set(self, environ: Mapping[str, str] | None = None) -> bool:
        """Whether :meth:`resolve` would succeed, without remembering the value."""
        try:
            return bool(expand_vars(self.template, environ))
        except MissingVariable:
            return False

    def resolve(self, environ: Mapping[str, str] | None = None) -> str:
        """The secret's value; a ConfigError naming file, key, line and variable if unset."""
        try:
            value = expand_vars(self.template, environ)
        except MissingVariable as err:
            raise ConfigError(
                [
                    Problem(
                        self.file or "<config>",
                        self.key,
                        f"environment variable {err.name} is not set",
                        self.line,
                    )
                ]
            ) from None
        register_secret(value)
        return value

    def describe(self) -> str:
        """What may be shown to people: the variable names, never the value."""
        if self.is_literal:
            return "(literal value in file)"
        return ", ".join(f"${{{v}}}" for v in self.variables)

    def __repr__(self) -> str:
        return f"SecretRef({self.describe()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretRef) and other.template == self.template

    def __hash__(self) -> int:
        return hash(self.template)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        def coerce(value: Any) -> SecretRef:
            if isinstance(value, SecretRef):
                return value
            if isinstance(value, str | int):
                return SecretRef(str(value))
            raise ValueError("expected a string such as ${MY_API_KEY}")

        return core_schema.no_info_plain_validator_function(
            coerce,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda ref: ref.describe()
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(cls, schema: Any, handler: Any) -> dict[str, Any]:
        return {"type": "string", "description": "an environment reference such as ${MY_KEY}"}


_TOKEN_SEGMENT = re.compile(r"^[A-Za-z0-9_\-]{16,}$")


def url_secrets(url: str) -> list[str]:
    """The parts of a webhook URL that act as credentials.

    Chat-bot webhooks carry their token in the URL itself: every query value (WeCom's ``key``,
    DingTalk's ``access_token``) and a long token-like last path segment (Feishu's
    ``/hook/<token>``, Slack's ``/services/.../<token>``).
    """
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [value for _, value in parse_qsl(parts.query) if len(value) >= 4]
    last = parts.path.rstrip("/").rsplit("/", 1)[-1]
    if _TOKEN_SEGMENT.match(last):
        found.append(last)
    return found


def mask_url(url: str) -> str:
    """``url`` with its credential parts (see :func:`url_secrets`) replaced by ``***``."""
    return mask(url, frozenset(url_secrets(url)))


def is_secret_path(path: tuple[Any, ...]) -> bool:
    """Whether the value at this key path is a secret (kept unexpanded until used)."""
    return bool(path) and isinstance(path[-1], str) and path[-1] in SECRET_KEYS


def attach_origins(value: Any, file: str, located: Any, path: tuple[Any, ...] = ()) -> None:
    """Record, on every SecretRef inside a validated model, where in the file it was written."""
    from pydantic import BaseModel

    if isinstance(value, SecretRef):
        from oryxos.yamlfile import dotted

        value.file, value.key, value.line = file, dotted(path), located.line_of(path)
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            attach_origins(getattr(value, name), file, located, (*path, name))
    elif isinstance(value, dict):
        for key, item in value.items():
            attach_origins(item, file, located, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            attach_origins(item, file, located, (*path, index))
