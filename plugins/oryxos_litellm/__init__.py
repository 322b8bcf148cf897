"""Built-in provider plugin: every ``providers:`` entry of config.yaml, called through litellm.

Importing this module is free: litellm (≈ 3 s to import) is imported only when a model is
first called, or in the background by ``oryxos chat`` while the person types (:func:`preload`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oryxos import hookimpl

if TYPE_CHECKING:
    from oryxos.config import Config


@hookimpl
def oryxos_register_providers(register: Any, config: Config) -> None:
    from oryxos_litellm.provider import LiteLLMProvider

    for name, provider_config in config.providers.items():
        register(name, LiteLLMProvider(name, provider_config))
