"""Shared test set-up. The fixtures themselves come from the public ``oryxos.testing`` plugin
(enabled with ``-p oryxos.testing`` in pyproject.toml), so the project tests itself the way
plugin authors test their plugins."""

import pytest
from sandbox_kit import Sandboxed, build


@pytest.fixture
def sandboxed(tmp_path) -> Sandboxed:
    """A runtime with known whitelists and probe tools (see tests/sandbox_kit.py)."""
    env = build(tmp_path)
    yield env
    env.runtime.close()
