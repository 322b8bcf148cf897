"""YAML files that people write, validated with pydantic, with errors that name file, key and line.

config.yaml, AGENT.md frontmatter, SKILL.md frontmatter and mcp_servers.yaml all go through
:func:`load_model`: PyYAML parses the text (keeping each node's line so that any error can say
where it is), ``${VAR}`` references are expanded, and a pydantic model validates the result.
Unknown keys get a "did you mean" suggestion.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import yaml

from oryxos.errors import FileProblemError, Problem

M = TypeVar("M")

#: ``${NAME}`` or ``${NAME:-default}``; ``$${`` escapes a literal ``${``.
VAR_PATTERN = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(LookupError):
    """An environment variable named by ``${VAR}`` is not set."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def expand_vars(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` in ``text``; raise MissingVariable if unset."""
    env = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise MissingVariable(name)
            return default
        return value

    return VAR_PATTERN.sub(replace, text)


def variables_in(text: str) -> list[str]:
    """The names of the variables that ``text`` refers to."""
    return [m.group(1) for m in VAR_PATTERN.finditer(text) if m.group(1)]


@dataclass
class Located:
    """Parsed YAML data plus the line of every key path in it."""

    data: Any
    lines: dict[tuple[Any, ...], int] = field(default_factory=dict)
    line_offset: int = 0

    def line_of(self, path: Iterable[Any]) -> int | None:
        """The 1-based line of the deepest known node on ``path``."""
        path = tuple(path)
        while True:
            if path in self.lines:
                return self.lines[path] + self.line_offset
            if not path:
                return None
            path = path[:-1]


def _walk(node: yaml.Node, path: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value
            lines[(*path, key)] = key_node.start_mark.line + 1
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)


def parse_yaml(text: str, filename: str, *, line_offset: int = 0) -> Located:
    """Parse YAML text; a syntax error becomes a FileProblemError naming the line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 + line_offset if mark is not None else None
        reason = getattr(err, "problem", None) or str(err)
        raise FileProblemError(
            [Problem(filename, "", f"YAML syntax error: {reason}", line)]
        ) from err
    lines: dict[tuple[Any, ...], int] = {}
    if node is not None:
        _walk(node, (), lines)
    return Located(data, lines, line_offset)


def expand_tree(
    located: Located,
    filename: str,
    *,
    skip: Callable[[tuple[Any, ...]], bool] = lambda path: False,
    environ: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Expand ``${VAR}`` in every string value of ``located.data`` in place.

    Values whose path ``skip`` accepts are left as written (secrets are resolved when used, so
    that a missing key variable only disables the thing that needs it). Returns one Problem per
    missing variable.
    """
    problems: list[Problem] = []

    def visit(value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, dict):
            return {k: visit(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [visit(v, (*path, i)) for i, v in enumerate(value)]
        if isinstance(value, str) and "${" in value and not skip(path):
            try:
                return expand_vars(value, environ)
            except MissingVariable as err:
                problems.append(
                    Problem(
                        filename,
                        dotted(path),
                        f"environment variable {err.name} is not set",
                        located.line_of(path),
                    )
                )
        return value

    located.data = visit(located.data, ())
    return problems


def dotted(path: Iterable[Any]) -> str:
    """``("providers", "deepseek", "model")`` → ``providers.deepseek.model``; ints → ``[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _allowed_keys(model: type, path: tuple[Any, ...]) -> list[str]:
    """Field names (and aliases) a pydantic model accepts at ``path``, for suggestions."""
    from typing import get_args, get_origin

    from pydantic import BaseModel

    current: Any = model
    for part in path:
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(part)
            if info is None:
                return []
            current = info.annotation
        elif get_origin(current) in (dict, Mapping):
            current = get_args(current)[1]
        elif get_origin(current) in (list, tuple):
            current = get_args(current)[0]
        else:
            return []
        args = [a for a in get_args(current) if a is not type(None)]
        if (
            get_origin(current) is not None
            and len(args) == 1
            and get_origin(current)
            not in (
                dict,
                list,
                tuple,
                Mapping,
            )
        ) or (type(None) in get_args(current) and len(args) == 1):
            current = args[0]
    if isinstance(current, type) and issubclass(current, BaseModel):
        names = []
        for name, info in current.model_fields.items():
            names.append(info.alias or name)
        return names
    return []


def _describe(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "unknown key"
    msg = error.get("msg", "invalid value")
    value = error.get("input")
    if kind.endswith("_type") or kind.endswith("_parsing"):
        shown = repr(value)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        return f"{msg[0].lower() + msg[1:]} (got {shown})"
    return msg


def pydantic_problems(err: Any, model: type, located: Located, filename: str) -> list[Problem]:
    """Turn a pydantic ValidationError into Problems with key path, line and suggestion."""
    problems: list[Problem] = []
    for error in err.errors():
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
        message = _describe(error)
        if error.get("type") == "extra_forbidden" and loc:
            choices = _allowed_keys(model, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), choices, n=1)
            if close:
                message += f"; did you mean '{close[0]}'?"
            elif choices:
                message += f"; expected one of: {', '.join(sorted(choices))}"
        problems.append(Problem(filename, dotted(loc), message, located.line_of(loc)))
    return problems


def validate(model: type[M], located: Located, filename: str, **context: Any) -> M:
    """Validate ``located.data`` against a pydantic model or raise FileProblemError."""
    from pydantic import ValidationError

    data = located.data if located.data is not None else {}
    if not isinstance(data, dict):
        raise FileProblemError(
            [Problem(filename, "", "expected a mapping of keys to values at the top level", 1)]
        )
    try:
        return model.model_validate(data, context=context or None)  # type: ignore[attr-defined]
    except ValidationError as err:
        raise FileProblemError(pydantic_problems(err, model, located, filename)) from None


def load_model(
    model: type[M],
    text: str,
    filename: str,
    *,
    line_offset: int = 0,
    keep_vars: Callable[[tuple[Any, ...]], bool] = lambda path: False,
    environ: Mapping[str, str] | None = None,
    **context: Any,
) -> M:
    """Parse, expand and validate in one go: the usual way to read a file people write."""
    located = parse_yaml(text, filename, line_offset=line_offset)
    problems = expand_tree(located, filename, skip=keep_vars, environ=environ)
    try:
        result = validate(model, located, filename, **context)
    except FileProblemError as err:
        missing = {p.key for p in problems}  # a missing variable explains the value's error
        problems.extend(p for p in err.problems if p.key not in missing)
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.key))
        raise FileProblemError(problems)
    return result
