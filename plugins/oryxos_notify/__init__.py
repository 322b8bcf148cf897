"""Built-in notify plugin: the feishu, wecom, dingtalk and webhook channel types, the ``notify``
tool and the ``oryxos notify`` commands.

Importing this module is free: httpx is imported only when a message is sent, click only when
the CLI is built (it is loaded by then).
"""

from __future__ import annotations

from typing import Any

from oryxos import hookimpl


@hookimpl
def oryxos_register_notify_adapters(register: Any) -> None:
    from oryxos_notify.adapters import builtin_adapters

    for type_name, adapter in builtin_adapters().items():
        register(type_name, adapter)


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    from oryxos_notify.tool import build_notify_tool

    catalog.register(
        "notify",
        groups=["notify"],
        builder=build_notify_tool,
        description="Send a message to a registered notify channel, by name.",
    )


@hookimpl
def oryxos_register_commands(cli: Any) -> None:
    from oryxos_notify.cli import notify

    cli.add_command(notify)
