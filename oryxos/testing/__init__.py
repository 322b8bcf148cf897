"""The OryxOS testing kit: a pytest plugin and a scripted model server.

- :mod:`oryxos.testing.server` — :class:`ScriptedModelServer`, :class:`Reply`, YAML
  :class:`Script` files and ``python -m oryxos.testing.model_server`` (no pytest needed);
- :mod:`oryxos.testing.fixtures` — the opt-in pytest plugin (``pytest_plugins =
  ["oryxos.testing"]`` or ``-p oryxos.testing``): ``oryxos_workspace``, ``oryxos_runtime``,
  ``oryxos_cli``, ``oryxos_make_pm``, ``oryxos_inline_plugin``, ``oryxos_model_server``.

Everything is re-exported here, so ``from oryxos.testing import Reply, use_model_server`` works.
"""

from __future__ import annotations

from oryxos.testing.server import (
    Reply,
    Script,
    ScriptedModelServer,
    ScriptError,
    Step,
    use_model_server,
)

__all__ = [
    "Reply",
    "Script",
    "ScriptError",
    "ScriptedModelServer",
    "Step",
    "use_model_server",
]

try:  # the fixtures need pytest; the model server (python -m oryxos.testing.model_server) does not
    import pytest as _pytest  # noqa: F401
except ModuleNotFoundError:  # pragma: no cover - only without the dev extra
    pass
else:
    from oryxos.testing.fixtures import (  # noqa: F401  (pytest finds fixtures by name here)
        ORYXOS_ENV,
        CliInvoker,
        _oryxos_clean_env,
        inline_plugin,
        make_workspace,
        oryxos_cli,
        oryxos_inline_plugin,
        oryxos_make_pm,
        oryxos_model_server,
        oryxos_pm,
        oryxos_runtime,
        oryxos_workspace,
    )

    __all__ += ["CliInvoker", "inline_plugin", "make_workspace"]
