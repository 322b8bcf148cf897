"""Package discovery only; everything else about the package is in setup.cfg.

setup.cfg's ``find:`` searches a single root, but OryxOS has two: the kernel in ``.`` and one
top-level import package per built-in plugin in ``plugins/`` (so that any plugin can later move
to a distribution of its own without a rename).
"""

from setuptools import find_namespace_packages, find_packages, setup

plugin_packages = find_packages("plugins", include=["oryxos_*"])

setup(
    # namespace discovery so that data folders (oryxos/templates/...) ship with the package
    packages=find_namespace_packages(".", include=["oryxos", "oryxos.*"]) + plugin_packages,
    package_dir={name: "plugins/" + name.replace(".", "/") for name in plugin_packages},
)
