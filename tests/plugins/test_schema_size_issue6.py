"""Every schema byte is sent with every model request: the eleven http, util, memory and
interaction tools together stay within 5,200 bytes of JSON (measured 5,098)."""

from __future__ import annotations

import json


def test_schemas_stay_small(oryxos_runtime):
    catalog = oryxos_runtime.catalog
    ctx = catalog.context()
    plugins = ("http", "util", "memory", "interaction")
    tools = [catalog.build(e.name, ctx) for e in catalog.entries() if e.plugin in plugins]
    assert len(tools) == 11
    size = sum(len(json.dumps(t.function_schema())) for t in tools)
    assert size <= 5200, size
