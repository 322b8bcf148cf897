"""The plugin-manager factory: entry points, allow/block lists, broken-plugin reports, tracing.

Unlike pluggy's ``load_setuptools_entrypoints``, which silently skips a duplicate entry-point
name and lets a broken plugin crash start-up, :func:`get_plugin_manager` reports both — naming
the plugin and the cause — and goes on without the plugin. It is a factory, not a global: each
caller (and each test) gets a fresh manager.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pluggy

from oryxos import hookspecs
from oryxos.errors import OryxError, StartupError

ENTRY_POINT_GROUP = "oryxos"
ENV_DISABLE = "ORYXOS_DISABLE_PLUGINS"
ENV_LOAD = "ORYXOS_LOAD_PLUGINS"
ENV_TRACE = "ORYXOS_TRACE_PLUGINS"

log = logging.getLogger("oryxos.plugins")


@dataclass(frozen=True)
class PluginInfo:
    """What ``oryxos plugins`` shows for one loaded plugin."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "distribution": self.distribution,
            "version": self.version,
            "hooks": self.hooks,
        }


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that was not loaded, and why."""

    name: str
    distribution: str | None
    cause: str

    def __str__(self) -> str:
        dist = f" (from {self.distribution})" if self.distribution else ""
        return f"plugin {self.name}{dist} not loaded: {self.cause}"


@dataclass
class LoadReport:
    """What happened while loading: broken plugins and those left out on purpose."""

    broken: list[BrokenPlugin] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    distributions: dict[str, tuple[str, str]] = field(default_factory=dict)


class PluginManager(pluggy.PluginManager):
    """pluggy's manager plus what OryxOS knows about each plugin's origin."""

    def __init__(self) -> None:
        super().__init__("oryxos")
        self.report = LoadReport()
        self.tracing = False

    def plugin_infos(self) -> list[PluginInfo]:
        """One entry per loaded plugin, in load order."""
        infos = []
        for name, plugin in self.list_name_plugin():
            if plugin is None:
                continue
            dist, version = self.report.distributions.get(name, (None, None))
            hooks = sorted(caller.name for caller in self.get_hookcallers(plugin) or [])
            module = getattr(plugin, "__name__", None) or type(plugin).__module__
            infos.append(PluginInfo(name, module, dist, version, hooks))
        return infos

    def call_each(self, hook_name: str, registry: Any, **kwargs: Any) -> None:
        """Call a registration hook one implementation at a time, telling the registry whose.

        An implementation that raises is a StartupError naming the plugin (an OryxError from
        the registry itself already names it and passes through).
        """
        caller = getattr(self.hook, hook_name)
        for impl in caller.get_hookimpls():
            registry.current_plugin = impl.plugin_name
            args = {name: kwargs[name] for name in impl.argnames}
            if self.tracing:
                _trace_writer(f"{hook_name} [{impl.plugin_name}]\n")
            try:
                impl.function(**args)
            except OryxError:
                raise
            except Exception as err:
                raise StartupError(
                    f"plugin {impl.plugin_name}: {hook_name} failed: {type(err).__name__}: {err}"
                ) from err
            finally:
                registry.current_plugin = None


def _trace_writer(message: str) -> None:
    sys.stderr.write(f"[oryxos trace] {message}")


def _name_set(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


def _matches(names: set[str], ep_name: str, module: str) -> bool:
    return ep_name in names or module in names or module.split(".")[0] in names


def _unspecified_hooks(pm: PluginManager, plugin: object) -> list[str]:
    """Hook implementations of ``plugin`` for which no hookspec exists (misspelt names)."""
    bad = []
    for caller in pm.get_hookcallers(plugin) or []:
        if not caller.has_spec():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin and not impl.optionalhook:
                    bad.append(caller.name)
    return bad


def register_plugin(
    pm: PluginManager, plugin: object, name: str, distribution: str | None = None
) -> bool:
    """Register one plugin object, reporting (not raising) a bad hookimpl or unknown hook."""
    try:
        pm.register(plugin, name=name)
    except (pluggy.PluginValidationError, ValueError) as err:
        pm.report.broken.append(BrokenPlugin(name, distribution, f"invalid hook: {err}"))
        return False
    unknown = _unspecified_hooks(pm, plugin)
    if unknown:
        pm.unregister(plugin)
        pm.report.broken.append(
            BrokenPlugin(name, distribution, f"implements unknown hook(s): {', '.join(unknown)}")
        )
        return False
    return True


def get_plugin_manager(
    *,
    disabled: Iterable[str] = (),
    plugins: Iterable[tuple[str, object]] = (),
    entry_points: bool = True,
    environ: Mapping[str, str] | None = None,
) -> PluginManager:
    """A fresh plugin manager with every allowed entry-point plugin loaded.

    :param disabled: plugin names not to load (``plugins.disabled`` from config.yaml).
    :param plugins: extra ``(name, plugin)`` pairs registered after the entry points (inline
        plugins in tests).
    :param entry_points: load the ``oryxos`` entry-point group (off for isolated tests).
    :param environ: where to read ``ORYXOS_LOAD_PLUGINS`` (allowlist),
        ``ORYXOS_DISABLE_PLUGINS`` (blocklist) and ``ORYXOS_TRACE_PLUGINS``.
    """
    env = os.environ if environ is None else environ
    pm = PluginManager()
    pm.add_hookspecs(hookspecs)
    pm.hook.oryxos_addhooks.call_historic(kwargs={"pluginmanager": pm})
    if env.get(ENV_TRACE):
        pm.trace.root.setwriter(_trace_writer)
        pm.enable_tracing()
        pm.tracing = True

    blocked = set(disabled) | (_name_set(env.get(ENV_DISABLE)) or set())
    allowed = _name_set(env.get(ENV_LOAD))
    if entry_points:
        _load_entry_points(pm, blocked, allowed)
    for name, plugin in plugins:
        register_plugin(pm, plugin, name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as err:  # pragma: no cover - register_plugin checks first
        raise StartupError(str(err)) from err
    for broken in pm.report.broken:
        log.warning("%s", broken)
    return pm


def _load_entry_points(pm: PluginManager, blocked: set[str], allowed: set[str] | None) -> None:
    from importlib.metadata import entry_points

    seen: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else None
        version = ep.dist.version if ep.dist is not None else None
        if ep.name in seen:
            if seen[ep.name] != f"{dist}:{ep.value}":  # the same one seen twice on sys.path is fine
                pm.report.broken.append(
                    BrokenPlugin(
                        ep.name,
                        dist,
                        f"duplicate entry-point name {ep.name!r}: already provided by "
                        f"{seen[ep.name].split(':')[0]}",
                    )
                )
            continue
        seen[ep.name] = f"{dist}:{ep.value}"
        module = ep.value.split(":")[0]
        if _matches(blocked, ep.name, module) or (
            allowed is not None and not _matches(allowed, ep.name, module)
        ):
            pm.report.disabled.append(ep.name)
            continue
        try:
            plugin = ep.load()
        except Exception as err:
            pm.report.broken.append(
                BrokenPlugin(ep.name, dist, f"import failed: {type(err).__name__}: {err}")
            )
            continue
        if register_plugin(pm, plugin, ep.name, dist):
            pm.report.distributions[ep.name] = (dist or "", version or "")
