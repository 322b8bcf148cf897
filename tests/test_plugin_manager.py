"""The plugin-manager factory: entry points, broken plugins, duplicates, allow/block lists."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from oryxos.plugins import get_plugin_manager


def make_distribution(root: Path, dist: str, modules: dict[str, str], entry_points: dict[str, str]):
    """A real installed distribution on sys.path: dist-info with entry points, and modules."""
    info = root / f"{dist.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    lines = "\n".join(f"{name} = {target}" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[oryxos]\n{lines}\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def site(tmp_path, monkeypatch):
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    yield root
    for name in list(sys.modules):
        if name.startswith("fake_"):
            del sys.modules[name]


GOOD = """
from oryxos import hookimpl

@hookimpl
def oryxos_register_tools(catalog):
    def fake_tool(x: int) -> str:
        "Echo x."
        return str(x)
    catalog.register(fake_tool)
"""


def test_entry_point_plugins_are_loaded_with_their_distribution(site):
    make_distribution(site, "fake-good", {"fake_good": GOOD}, {"good": "fake_good"})
    pm = get_plugin_manager(environ={})
    info = {i.name: i for i in pm.plugin_infos()}["good"]
    assert (info.distribution, info.version) == ("fake-good", "1.2.3")
    assert info.hooks == ["oryxos_register_tools"]
    assert pm.report.broken == []


def test_a_plugin_that_fails_to_import_is_reported_and_the_rest_load(site):
    make_distribution(site, "fake-good", {"fake_good": GOOD}, {"good": "fake_good"})
    make_distribution(
        site,
        "fake-broken",
        {"fake_broken": "raise RuntimeError('boom at import')"},
        {"broken": "fake_broken"},
    )
    pm = get_plugin_manager(environ={})
    assert "good" in pm.list_name_plugin().__repr__()
    (broken,) = pm.report.broken
    assert broken.name == "broken" and broken.distribution == "fake-broken"
    assert "RuntimeError: boom at import" in broken.cause
    assert pm.get_plugin("broken") is None and pm.get_plugin("good") is not None


def test_a_duplicate_entry_point_name_is_reported_naming_both(site):
    make_distribution(site, "fake-one", {"fake_one": GOOD}, {"same": "fake_one"})
    make_distribution(site, "fake-two", {"fake_two": GOOD}, {"same": "fake_two"})
    pm = get_plugin_manager(environ={})
    (dup,) = pm.report.broken
    assert dup.name == "same"
    assert "duplicate entry-point name 'same'" in dup.cause
    assert {dup.distribution, dup.cause.rsplit(" ", 1)[-1]} == {"fake-one", "fake-two"}
    assert pm.get_plugin("same") is not None


def test_a_misspelt_hook_is_reported_not_ignored(site):
    make_distribution(
        site,
        "fake-typo",
        {
            "fake_typo": "from oryxos import hookimpl\n@hookimpl\ndef oryxos_register_tool(catalog): pass\n"
        },
        {"typo": "fake_typo"},
    )
    pm = get_plugin_manager(environ={})
    (broken,) = pm.report.broken
    assert broken.name == "typo"
    assert "unknown hook(s): oryxos_register_tool" in broken.cause
    assert pm.get_plugin("typo") is None


def test_a_hookimpl_with_wrong_arguments_is_reported(site):
    make_distribution(
        site,
        "fake-args",
        {
            "fake_args": "from oryxos import hookimpl\n@hookimpl\ndef oryxos_register_tools(nope): pass\n"
        },
        {"args": "fake_args"},
    )
    pm = get_plugin_manager(environ={})
    (broken,) = pm.report.broken
    assert broken.name == "args" and "invalid hook" in broken.cause and "nope" in broken.cause


def test_blocklist_allowlist_and_config_disabled(site):
    for name in ("alpha", "beta", "gamma"):
        make_distribution(
            site,
            f"fake-{name}",
            {f"fake_{name}": GOOD.replace("fake_tool", f"t_{name}")},
            {name: f"fake_{name}"},
        )

    def loaded(**kwargs):
        pm = get_plugin_manager(**kwargs)
        return {n for n, _ in pm.list_name_plugin()} & {"alpha", "beta", "gamma"}

    assert loaded(environ={}) == {"alpha", "beta", "gamma"}
    assert loaded(environ={"ORYXOS_DISABLE_PLUGINS": "alpha, gamma"}) == {"beta"}
    assert loaded(environ={"ORYXOS_LOAD_PLUGINS": "gamma"}) == {"gamma"}
    assert loaded(environ={"ORYXOS_LOAD_PLUGINS": ""}) == set()
    assert loaded(environ={}, disabled=["beta"]) == {"alpha", "gamma"}
    # the module name works as well as the entry-point name
    assert loaded(environ={"ORYXOS_DISABLE_PLUGINS": "fake_alpha"}) == {"beta", "gamma"}
    pm = get_plugin_manager(environ={"ORYXOS_DISABLE_PLUGINS": "alpha"})
    assert "alpha" in pm.report.disabled


def test_trace_switch_logs_hook_calls(capsys, oryxos_inline_plugin):
    from oryxos.catalog import ToolCatalog

    plugin = oryxos_inline_plugin("traced", oryxos_register_tools=lambda catalog: None)
    pm = get_plugin_manager(
        plugins=[plugin], entry_points=False, environ={"ORYXOS_TRACE_PLUGINS": "1"}
    )
    pm.call_each("oryxos_register_tools", ToolCatalog(), catalog=ToolCatalog(), config=None)
    pm.hook.oryxos_startup(runtime=None)
    err = capsys.readouterr().err
    assert "[oryxos trace] oryxos_register_tools [traced]" in err
    assert "oryxos_startup" in err


def test_no_trace_output_by_default(capsys, oryxos_inline_plugin):
    pm = get_plugin_manager(
        plugins=[oryxos_inline_plugin("quiet", oryxos_startup=lambda: None)],
        entry_points=False,
        environ={},
    )
    pm.hook.oryxos_startup(runtime=None)
    assert "[oryxos trace]" not in capsys.readouterr().err


def test_a_plugin_whose_registration_raises_is_named(oryxos_workspace, oryxos_inline_plugin):
    from oryxos.errors import StartupError
    from oryxos.runtime import Runtime

    def explode(catalog):
        raise KeyError("missing thing")

    pm = get_plugin_manager(
        plugins=[oryxos_inline_plugin("exploding", oryxos_register_tools=explode)],
        entry_points=False,
        environ={},
    )
    runtime = Runtime.load(oryxos_workspace, pm)
    with pytest.raises(
        StartupError, match="plugin exploding: oryxos_register_tools failed: KeyError"
    ):
        runtime.catalog


def test_a_tool_registered_twice_names_both_plugins(oryxos_workspace, oryxos_inline_plugin):
    from oryxos.errors import StartupError
    from oryxos.runtime import Runtime

    def register(catalog):
        def same(x: str) -> str:
            "Same."
            return x

        catalog.register(same)

    pm = get_plugin_manager(
        plugins=[
            oryxos_inline_plugin("first", oryxos_register_tools=register),
            oryxos_inline_plugin("second", oryxos_register_tools=register),
        ],
        entry_points=False,
        environ={},
    )
    with pytest.raises(StartupError) as err:
        Runtime.load(oryxos_workspace, pm).catalog
    assert "tool 'same' is registered twice" in str(err.value)
    assert "first" in str(err.value) and "second" in str(err.value)


def test_each_call_gets_a_fresh_manager():
    assert get_plugin_manager(environ={}) is not get_plugin_manager(environ={})
