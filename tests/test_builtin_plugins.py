"""Every built-in plugin is an entry point of the oryxos distribution, and each can be disabled."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

BUILTINS = sorted(ep.name for ep in entry_points(group="oryxos") if ep.dist.name == "oryxos")
HEAVY = ("litellm", "mcp", "flask", "waitress", "peewee", "httpx", "pydantic", "jsonschema")


def test_builtins_are_declared_in_setup_cfg():
    import configparser
    from pathlib import Path

    parser = configparser.ConfigParser()
    parser.read(Path(__file__).parents[1] / "setup.cfg")
    declared = sorted(
        line.split("=")[0].strip()
        for line in parser["options.entry_points"]["oryxos"].splitlines()
        if line.strip()
    )
    assert declared == BUILTINS, "reinstall with 'pip install -e .' after changing entry points"


@pytest.mark.parametrize("disabled", BUILTINS)
def test_disabling_one_builtin_leaves_the_others_working(oryxos_cli, disabled):
    env = {"ORYXOS_DISABLE_PLUGINS": disabled}
    listed = oryxos_cli.invoke(["plugins", "--json"], env=env)
    assert listed.exit_code == 0, listed.output
    report = json.loads(listed.output)
    names = {p["name"] for p in report["plugins"]}
    assert disabled not in names
    assert set(BUILTINS) - {disabled} <= names
    assert report["broken"] == []

    status = oryxos_cli.invoke(["status", "--json"], env=env)
    assert status.exit_code == 0, status.output
    state = json.loads(status.output)
    assert state["config"]["valid"] is True
    if disabled == "storage":
        assert "no storage plugin registered 'peewee'" in state["storage"]["error"]
    else:
        assert "rows" in state["storage"]


def _imported_after(args: list[str], tmp_path) -> list[str]:
    code = (
        "import sys\n"
        "from oryxos.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('MODULES', sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout
    line = [ln for ln in out.splitlines() if ln.startswith("MODULES")][-1]
    return eval(line.split(" ", 1)[1])


@pytest.mark.parametrize("args", [["--help"], ["plugins"], ["plugins", "--json"]])
def test_cli_start_up_imports_nothing_heavy(tmp_path, args):
    assert _imported_after(args, tmp_path) == []
