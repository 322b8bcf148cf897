"""The bearer token (``server.api_token``) and the console's signing key.

With a token configured, every ``/api/v1`` endpoint except ``/health`` needs
``Authorization: Bearer <token>``, compared in constant time (:func:`hmac.compare_digest`).
The console signs its session cookie with a key derived from the token, or — without a token —
with a random key kept in ``.oryxos/web-secret`` (mode 0600) so that logins survive restarts.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import Any

SECRET_FILE = "web-secret"


def api_token(runtime: Any) -> str | None:
    """The configured token's value, or None (a ``${VAR}`` that is unset is a ConfigError)."""
    ref = runtime.config.server.api_token
    if ref is None:
        return None
    value = ref.resolve()
    if not value.strip():
        from oryxos.errors import ConfigError, Problem

        # an empty token must not silently turn authentication off
        raise ConfigError(
            [
                Problem(
                    ref.file or "<config>",
                    ref.key or "server.api_token",
                    f"the API token ({ref.describe()}) is empty",
                    ref.line,
                )
            ]
        )
    return value


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison of two tokens."""
    if given is None:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


def signing_key(runtime: Any, token: str | None) -> bytes:
    """The Flask secret key: derived from the token, else stored per workspace (0600)."""
    if token:
        return hmac.new(token.encode(), b"oryxos-console-cookie-v1", hashlib.sha256).digest()
    path = Path(runtime.workspace.path) / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        pass
    key = secrets.token_bytes(32)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key.hex())
    os.replace(tmp, path)
    return bytes.fromhex(path.read_text().strip())  # another process may have won the race
