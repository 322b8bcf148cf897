"""Runtime.close() calls oryxos_shutdown once the catalog was built, even without startup()."""

from __future__ import annotations

import pytest

from oryxos.errors import StartupError
from oryxos.runtime import Runtime


def _runtime(workspace, make_pm, *plugins):
    return Runtime.load(workspace, make_pm(list(plugins), entry_points=False))


def test_close_shuts_down_after_the_catalog_was_built(
    oryxos_workspace, oryxos_make_pm, oryxos_inline_plugin
):
    events = []
    plugin = oryxos_inline_plugin(
        "life",
        oryxos_register_tools=lambda catalog: events.append("tools"),
        oryxos_shutdown=lambda runtime: events.append("stop"),
    )
    runtime = _runtime(oryxos_workspace, oryxos_make_pm, plugin)
    runtime.catalog
    runtime.close()
    runtime.close()
    assert events == ["tools", "stop"]


def test_close_shuts_down_when_building_the_catalog_failed(
    oryxos_workspace, oryxos_make_pm, oryxos_inline_plugin
):
    events = []

    def clash(catalog):
        catalog.register("x", builder=lambda ctx: None)
        catalog.register("x", builder=lambda ctx: None)

    started = oryxos_inline_plugin("starter", oryxos_shutdown=lambda runtime: events.append("stop"))
    broken = oryxos_inline_plugin("broken", oryxos_register_tools=clash)
    runtime = _runtime(oryxos_workspace, oryxos_make_pm, started, broken)
    with pytest.raises(StartupError):
        runtime.catalog
    runtime.close()
    assert events == ["stop"]


def test_close_without_start_or_catalog_does_not_shut_down(
    oryxos_workspace, oryxos_make_pm, oryxos_inline_plugin
):
    events = []
    plugin = oryxos_inline_plugin("life", oryxos_shutdown=lambda runtime: events.append("stop"))
    _runtime(oryxos_workspace, oryxos_make_pm, plugin).close()
    assert events == []
