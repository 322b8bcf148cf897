"""The wheel carries the kernel, every built-in plugin and the templates `oryxos init` copies."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_wheel_ships_kernel_plugins_and_templates(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("oryxos-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "oryxos/cli.py" in names
    assert "oryxos/templates/config.yaml" in names
    assert "oryxos/templates/agents/default/AGENT.md" in names
    assert "oryxos/templates/mcp_servers.yaml.example" in names
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "__init__.py").exists())
    for plugin in plugins:
        assert f"{plugin}/__init__.py" in names, plugin
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "oryxos = oryxos.cli:main" in text and "[oryxos]" in text


def test_config_example_is_the_template_init_copies():
    example = ROOT / "config/mcp_servers.yaml.example"
    assert example.read_text() == (ROOT / "oryxos/templates/mcp_servers.yaml.example").read_text()
