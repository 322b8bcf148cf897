"""The home page stays a working front door: its links resolve, every docs page is linked,
every example has an offline walk-through and an end-to-end test that runs it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
LINKS = set(re.findall(r"\]\(((?:docs|examples)/[^)#]*)", README))


def test_every_link_of_the_readme_resolves() -> None:
    missing = sorted(link for link in LINKS if not (ROOT / link).exists())
    assert not missing, f"README.md links to missing files: {missing}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    pages = {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")}
    assert pages - LINKS == set(), f"not linked from README.md: {sorted(pages - LINKS)}"


def test_the_readme_keeps_the_ci_test_command() -> None:
    command = 'pip install -e ".[dev]" -e examples/oryxos-plugin-hello && python -m pytest -q'
    assert command in README
    assert "python -m pytest -q" in (ROOT / ".ci/run").read_text()


def test_every_runnable_example_has_an_offline_walkthrough_and_an_e2e_test() -> None:
    runnable = [p.parent for p in (ROOT / "examples").glob("*/offline")]
    assert {p.name for p in runnable} >= {"weather", "memory", "pr-digest", "multi-agent", "rest"}
    for example in runnable:
        text = (example / "README.md").read_text(encoding="utf-8")
        assert "## Offline" in text, example.name
        test = ROOT / "tests/e2e" / f"test_{example.name.replace('-', '_')}.py"
        assert test.exists(), f"no end-to-end test for examples/{example.name}"
        assert f"examples/{example.name}" in README
