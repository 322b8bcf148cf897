"""Documentation and tests cannot drift from the hookspecs (the datasette habit)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from oryxos import hookspecs

ROOT = Path(__file__).parents[1]
HOOKS = sorted(
    (name, fn)
    for name, fn in vars(hookspecs).items()
    if name.startswith("oryxos_") and callable(fn)
)


@pytest.mark.parametrize("name,fn", HOOKS, ids=[n for n, _ in HOOKS])
def test_every_hook_has_a_docs_section_headed_by_its_signature(name, fn):
    signature = f"### `{name}({', '.join(inspect.signature(fn).parameters)})`"
    text = (ROOT / "docs/plugins.md").read_text()
    assert signature in text.splitlines(), f"docs/plugins.md lacks the section {signature}"


@pytest.mark.parametrize("name,fn", HOOKS, ids=[n for n, _ in HOOKS])
def test_every_hook_has_a_test(name, fn):
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    names = re.findall(r"def (test_hook_\w+)", tests)
    assert any(name in test_name for test_name in names), f"no test_hook_... covers {name}"


@pytest.mark.parametrize("name,fn", HOOKS, ids=[n for n, _ in HOOKS])
def test_every_hook_has_a_docstring(name, fn):
    assert inspect.getdoc(fn), name
