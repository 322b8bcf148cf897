"""OryxOS: a self-hosted runtime for many business agents.

This module is free to import: it holds the ``hookimpl`` marker that plugins use and resolves
the public types on first access only (PEP 562), so a plugin's ``from oryxos import hookimpl``
costs no more than pluggy itself.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import pluggy

__version__ = "0.1.0"

#: Marks a function as an implementation of an OryxOS hook.
hookimpl = pluggy.HookimplMarker("oryxos")

#: Public name → module that defines it.
_PUBLIC = {
    "Tool": "oryxos.tools",
    "ToolResult": "oryxos.tools",
    "ToolCall": "oryxos.tools",
    "FunctionTool": "oryxos.tools",
    "tool": "oryxos.tools",
    "ToolCatalog": "oryxos.catalog",
    "ToolContext": "oryxos.catalog",
    "ToolExecutor": "oryxos.executor",
    "SandboxChecker": "oryxos.sandbox",
    "SandboxViolation": "oryxos.sandbox",
    "Registry": "oryxos.registry",
    "Config": "oryxos.config",
    "Runtime": "oryxos.runtime",
    "Workspace": "oryxos.workspace",
    "SecretRef": "oryxos.secrets",
    "OryxError": "oryxos.errors",
    "UsageError": "oryxos.errors",
    "NotFoundError": "oryxos.errors",
    "ConflictError": "oryxos.errors",
    "StartupError": "oryxos.errors",
    "ConfigError": "oryxos.errors",
    "Storage": "oryxos.storage",
    "SessionRecord": "oryxos.storage",
    "ToolInvocationRecord": "oryxos.storage",
    "LlmCallRecord": "oryxos.storage",
    "NotifyChannelRecord": "oryxos.storage",
    "WhitelistEntry": "oryxos.storage",
    "AuditQuery": "oryxos.storage",
    "Page": "oryxos.storage",
    "StatusSection": "oryxos.status",
}

__all__ = ["__version__", "hookimpl", *_PUBLIC]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'oryxos' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
