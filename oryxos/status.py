"""Plugins' parts of the runtime's status: ``oryxos status``, ``GET /api/v1/info``, the console.

A plugin that runs something an operator needs to see (servers, connections, queues) answers
the ``oryxos_status(runtime)`` hook with a :class:`StatusSection`. The kernel collects them in
:func:`collect_sections`; the CLI, the API and the console show them without knowing the plugin.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oryxos.runtime import Runtime

log = logging.getLogger("oryxos.status")


@dataclass
class StatusSection:
    """One plugin's status: a name, a one-line summary, and one row per thing it runs.

    ``ok`` is False when something needs an operator's attention (a server that failed to
    start, a file that does not parse); ``items`` are flat JSON-able mappings with the same keys.
    """

    name: str
    summary: str
    ok: bool = True
    items: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def collect_sections(runtime: Runtime) -> list[StatusSection]:
    """Every plugin's section, in plugin order. A plugin whose hook fails gets a failed
    section naming the error: a status report must not break because one part is broken."""
    sections: list[StatusSection] = []
    for impl in runtime.pm.hook.oryxos_status.get_hookimpls():  # in registration order
        try:
            section = impl.function(**({"runtime": runtime} if impl.argnames else {}))
        except Exception as err:
            log.warning("plugin %s: its status failed: %s", impl.plugin_name, err, exc_info=True)
            section = StatusSection(impl.plugin_name, f"status unavailable: {err}", ok=False)
        if section is not None:
            sections.append(section)
    return sections
