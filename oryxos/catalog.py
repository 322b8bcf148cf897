"""The ToolCatalog: one declaration per tool, filtered per call by groups and availability.

Each tool is registered once (``catalog.register``) with its groups, an availability rule and a
builder. A caller describes what it wants — tool names and ``@group`` names, as an agent's
AGENT.md lists them — and a :class:`ToolContext` for this call; the catalog returns the entries
that are both wanted and available. Builders run on every call with the context, so a caller can
widen a tool's schema or supply a factory for a tool whose handler differs per caller (the
``factories`` of the context) without touching the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oryxos.errors import NotFoundError, StartupError
from oryxos.tools import Tool, as_tool, sandbox_args_problem

if TYPE_CHECKING:
    from oryxos.config import Config
    from oryxos.runtime import Runtime

#: ``True``/``None``/``"always"``: always; ``False``: never; a string: a ToolContext predicate
#: name; a callable: called with the ToolContext.
Availability = bool | str | None | Callable[["ToolContext"], bool]
Builder = Callable[["ToolContext"], Tool]

#: Key of ``ToolContext.extra`` under which an interactive channel (the CLI chat) puts a
#: ``question -> answer`` callable; the ask_user tool calls it.
ASK_USER_KEY = "ask_user"


@dataclass
class ToolContext:
    """Everything a tool call may depend on, built once per call (or per turn) by the caller.

    Predicates named by availability rules are evaluated at most once per context.
    """

    agent: str | None = None
    session_id: str | None = None
    channel: str | None = None
    interactive: bool = False
    config: Config | None = None
    runtime: Runtime | None = None
    factories: dict[str, Callable[[ToolContext], Tool]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    #: Extra read-only roots for file tools (the agent's bound skill folders), on top of the
    #: sandbox's file whitelist.
    extra_read_roots: tuple[Path, ...] = ()
    _predicates: dict[str, Callable[[ToolContext], bool]] = field(default_factory=dict, repr=False)
    _memo: dict[str, bool] = field(default_factory=dict, repr=False)

    def check(self, predicate: str) -> bool:
        """The value of a named predicate for this context, computed once."""
        if predicate not in self._memo:
            fn = self._predicates.get(predicate) or getattr(type(self), predicate, None)
            if fn is None:
                raise NotFoundError(f"unknown tool availability predicate {predicate!r}")
            self._memo[predicate] = bool(fn(self))
        return self._memo[predicate]

    def factory(self, name: str) -> Callable[[ToolContext], Tool] | None:
        """The caller-supplied factory called ``name``, if any."""
        return self.factories.get(name)

    # Built-in predicates -------------------------------------------------------------------

    def is_interactive(self) -> bool:
        """True when a person can answer questions (the CLI chat)."""
        return self.interactive


@dataclass
class CatalogEntry:
    """One registered tool."""

    name: str
    groups: frozenset[str]
    available: Availability
    builder: Builder
    plugin: str
    description: str = ""

    def availability(self, ctx: ToolContext) -> tuple[bool, str]:
        """``(available, reason if not)`` for this context."""
        rule = self.available
        if rule is None or rule is True or rule == "always":
            return True, ""
        if rule is False:
            return False, "disabled"
        if isinstance(rule, str):
            return (True, "") if ctx.check(rule) else (False, f"{rule} is false")
        try:
            ok = bool(rule(ctx))
        except Exception as err:  # an availability rule must never break tool listing
            return False, f"availability check failed: {err}"
        return (True, "") if ok else (False, "not available in this context")


@dataclass
class Selection:
    """What a list of wanted names and groups resolved to in one context."""

    entries: list[CatalogEntry]
    unknown: list[str]
    unavailable: dict[str, str]

    @property
    def names(self) -> list[str]:
        return [entry.name for entry in self.entries]


class ToolCatalog:
    """Every tool the runtime knows, registered by plugins through ``oryxos_register_tools``."""

    def __init__(self) -> None:
        self.current_plugin: str | None = None
        self._entries: dict[str, CatalogEntry] = {}
        self._predicates: dict[str, Callable[[ToolContext], bool]] = {}

    # Registration --------------------------------------------------------------------------

    def register(
        self,
        tool: str | Tool | Callable[..., Any],
        *,
        groups: Iterable[str] | str = (),
        available: Availability = True,
        builder: Builder | None = None,
        description: str = "",
    ) -> CatalogEntry:
        """Declare one tool.

        :param tool: a Tool, a typed function (wrapped as a FunctionTool), or a name — then
            ``builder`` is required and is called with the ToolContext on every call.
        :param groups: group names; an agent may list ``@group`` to get all of a group.
        :param available: the availability rule (see :data:`Availability`).
        """
        plugin = self.current_plugin or "<unknown plugin>"
        if isinstance(tool, str):
            name = tool
            if builder is None:
                raise StartupError(
                    f"plugin {plugin}: tool {name!r} is registered without a builder"
                )
        else:
            try:
                built = as_tool(tool)
            except TypeError as err:
                raise StartupError(f"plugin {plugin}: {err}") from err
            problem = sandbox_args_problem(built)
            if problem:
                raise StartupError(f"plugin {plugin}: {problem}")
            name = built.name
            description = description or built.description
            builder = builder or (lambda ctx, _tool=built: _tool)
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise StartupError(
                f"plugin {plugin}: tool name {name!r} must be letters, digits, '_' or '-'"
            )
        if name in self._entries:
            raise StartupError(
                f"tool {name!r} is registered twice: by {self._entries[name].plugin} "
                f"and by {plugin}"
            )
        group_set = frozenset([groups] if isinstance(groups, str) else groups)
        entry = CatalogEntry(name, group_set, available, builder, plugin, description)
        self._entries[name] = entry
        return entry

    def add_predicate(self, name: str, fn: Callable[[ToolContext], bool]) -> None:
        """Add a named availability predicate (evaluated once per ToolContext)."""
        if name in self._predicates:
            raise StartupError(f"tool predicate {name!r} is registered twice")
        self._predicates[name] = fn

    def unregister(self, name: str) -> None:
        """Remove a tool (e.g. an MCP server's tools when the server is removed)."""
        self._entries.pop(name, None)

    # Queries -------------------------------------------------------------------------------

    def context(self, **kwargs: Any) -> ToolContext:
        """A ToolContext that knows this catalog's predicates."""
        ctx = ToolContext(**kwargs)
        ctx._predicates = self._predicates
        return ctx

    def bind(self, ctx: ToolContext) -> ToolContext:
        """Give a context built elsewhere this catalog's predicates."""
        ctx._predicates = self._predicates
        return ctx

    def entries(self) -> list[CatalogEntry]:
        return sorted(self._entries.values(), key=lambda e: e.name)

    def get(self, name: str) -> CatalogEntry:
        try:
            return self._entries[name]
        except KeyError:
            raise NotFoundError(f"unknown tool {name!r}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def groups(self) -> dict[str, list[str]]:
        """Group name → tool names."""
        out: dict[str, list[str]] = {}
        for entry in self.entries():
            for group in entry.groups:
                out.setdefault(group, []).append(entry.name)
        return dict(sorted(out.items()))

    def select(self, wanted: Iterable[str], ctx: ToolContext) -> Selection:
        """Resolve tool names and ``@group``s against availability in ``ctx``, in catalog order."""
        self.bind(ctx)
        names: set[str] = set()
        unknown: list[str] = []
        for item in wanted:
            if item.startswith("@"):
                members = [e.name for e in self._entries.values() if item[1:] in e.groups]
                if not members:
                    unknown.append(item)
                names.update(members)
            elif item in self._entries:
                names.add(item)
            else:
                unknown.append(item)
        entries, unavailable = [], {}
        for name in sorted(names):
            entry = self._entries[name]
            ok, reason = entry.availability(ctx)
            if ok:
                entries.append(entry)
            else:
                unavailable[name] = reason
        return Selection(entries, unknown, unavailable)

    def build(self, name: str, ctx: ToolContext) -> Tool:
        """Run the builder of one tool for this context."""
        entry = self.get(name)
        self.bind(ctx)
        built = entry.builder(ctx)
        if not isinstance(built, Tool):
            raise StartupError(
                f"plugin {entry.plugin}: the builder of tool {name!r} returned "
                f"{type(built).__name__}, not a Tool"
            )
        problem = sandbox_args_problem(built)
        if problem:
            raise StartupError(f"plugin {entry.plugin}: {problem}")
        return built

    def build_tools(self, wanted: Iterable[str], ctx: ToolContext) -> list[Tool]:
        """Tool instances for everything wanted and available in ``ctx``."""
        return [self.build(entry.name, ctx) for entry in self.select(wanted, ctx).entries]

    def tool_names(self, wanted: Iterable[str], ctx: ToolContext) -> list[str]:
        return self.select(wanted, ctx).names
