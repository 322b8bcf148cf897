"""The util, memory, interaction and http plugins load without their libraries: httpx,
trafilatura, lxml, jmespath and filelock are imported only when a tool runs."""

from __future__ import annotations

import subprocess
import sys

LIBRARIES = ("httpx", "trafilatura", "lxml", "jmespath", "filelock", "pydantic")


def test_loading_the_plugins_and_registering_their_tools_imports_no_library(tmp_path):
    code = (
        "import sys\n"
        "from oryxos.catalog import ToolCatalog\n"
        "import oryxos_util, oryxos_memory, oryxos_interaction, oryxos_http\n"
        "catalog = ToolCatalog()\n"
        "for plugin in (oryxos_util, oryxos_memory, oryxos_interaction, oryxos_http):\n"
        "    plugin.oryxos_register_tools(catalog=catalog)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {LIBRARIES!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.strip() == "[]", out.stderr
