"""Shared test set-up. The fixtures themselves come from the public ``oryxos.testing`` plugin
(enabled with ``-p oryxos.testing`` in pyproject.toml), so the project tests itself the way
plugin authors test their plugins."""
