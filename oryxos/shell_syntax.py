"""The shell tool's command language: a small, fully understood subset of POSIX sh.

The shell tool never hands a command line to ``/bin/sh``. This module turns the line into a
:class:`ShellPlan` — pipelines of simple commands (an argv list and redirections) joined by
``;``, ``&&``, ``||`` and newlines — and the shell plugin runs that plan itself with
``subprocess`` (no shell). What it does not understand it refuses, so nothing the sandbox did
not see can run: command and process substitution (``$(…)``, backticks, ``<(…)``), parameter
expansion (``$HOME``), subshells and groups (``( … )``, ``{ … }``), background jobs (``&``),
here-documents, variable assignments before a command (``X=1 cmd``) and every other operator.

Understood: words with single quotes, double quotes (without ``$`` or backticks inside),
backslash escapes, ``#`` comments, a leading unquoted ``~`` (home directory), unquoted glob
patterns (expanded by the runner in the working directory, like sh), the redirections ``<``,
``>``, ``>>``, ``2>``, ``2>>``, ``&>``, ``2>&1`` and ``>&2``, and pipes ``|``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

#: Separators between pipelines and what they mean for the next one.
SEPARATORS = (";", "&&", "||", "\n")
#: Redirection operators: operator → (file descriptor, mode). Mode "dup" duplicates a descriptor.
REDIRECTIONS: dict[str, tuple[int, str]] = {
    "<": (0, "r"),
    ">": (1, "w"),
    "1>": (1, "w"),
    ">>": (1, "a"),
    "1>>": (1, "a"),
    "2>": (2, "w"),
    "2>>": (2, "a"),
    "&>": (3, "w"),  # 3: stdout and stderr to the same file
    "&>>": (3, "a"),
}
DUPLICATIONS = {"2>&1": (2, 1), ">&2": (1, 2), "1>&2": (1, 2)}
# Longest first, so that ">>" wins over ">".
_OPERATORS = sorted(
    [*SEPARATORS, "|", *REDIRECTIONS, *DUPLICATIONS, "&", "|&", ";;", "<<", "<<<", "<>", ">|"],
    key=len,
    reverse=True,
)
_REFUSED_OPERATORS = {
    "&": "background jobs ('&') are not supported: the shell tool waits for every command",
    "|&": "'|&' is not supported; use '2>&1 |'",
    ";;": "';;' is not supported",
    "<<": "here-documents ('<<') are not supported",
    "<<<": "here-strings ('<<<') are not supported",
    "<>": "'<>' redirections are not supported",
    ">|": "'>|' redirections are not supported",
}
_UNQUOTED_REFUSED = {
    "$": "parameter expansion and command substitution ('$') are not supported; quote a literal "
    "'$' with single quotes",
    "`": "command substitution (backticks) is not supported",
    "(": "subshells and process substitution ('(', '<(…)') are not supported",
    ")": "subshells ('…)') are not supported",
    "{": "command groups and brace expansion ('{') are not supported; quote it",
    "}": "command groups and brace expansion ('}') are not supported; quote it",
    "!": "'!' (pipeline negation, history) is not supported; quote it",
}
GLOB_CHARS = frozenset("*?[")


class ShellSyntaxError(ValueError):
    """The line uses something the shell tool refuses or cannot parse; the message says what."""


@dataclass
class Word:
    """One word of a command: its text with quotes removed, and how it may be expanded."""

    text: str
    glob: bool = False  # an unquoted glob character was present
    tilde: bool = False  # it started with an unquoted '~'


@dataclass
class Redirect:
    """``fd`` (0, 1, 2 or 3 = stdout+stderr) to/from ``target`` with ``mode`` r/w/a,
    or a duplication ``fd`` → ``dup_of``."""

    fd: int
    mode: str
    target: str = ""
    dup_of: int | None = None


@dataclass
class SimpleCommand:
    """One program to run: ``argv[0]`` is the command as written; ``executable`` is filled in
    by the sandbox with the real path of the program that will run."""

    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)
    executable: str = ""

    @property
    def argv(self) -> list[str]:
        return [word.text for word in self.words]


@dataclass
class Step:
    """A pipeline and the separator before it (``""`` for the first, ``&&``, ``||`` or ``;``)."""

    op: str
    pipeline: list[SimpleCommand]


@dataclass
class ShellPlan:
    """What a command line would run, in order. Every command in it passed the sandbox."""

    line: str
    steps: list[Step]

    def commands(self) -> list[SimpleCommand]:
        return [command for step in self.steps for command in step.pipeline]


# ---------------------------------------------------------------------------------------------
# Lexer: words (with quoting information) and operators
# ---------------------------------------------------------------------------------------------


@dataclass
class _Token:
    kind: str  # "word" or "op"
    value: str
    word: Word | None = None


def _read_operator(line: str, i: int) -> str | None:
    for op in _OPERATORS:
        if line.startswith(op, i):
            return op
    return None


def tokenize(line: str) -> list[_Token]:
    """Split a line into words and operators, refusing anything not understood."""
    if "\x00" in line:
        raise ShellSyntaxError("the command contains a NUL byte")
    tokens: list[_Token] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in " \t\r":
            i += 1
            continue
        if line.startswith("\\\n", i):  # a line continuation between words is blank
            i += 2
            continue
        if ch == "#":  # a comment runs to the end of the line
            while i < n and line[i] != "\n":
                i += 1
            continue
        op = _read_operator(line, i)  # "2>" etc. only here, at the start of a word
        if op is not None:
            if op in _REFUSED_OPERATORS:
                raise ShellSyntaxError(_REFUSED_OPERATORS[op])
            tokens.append(_Token("op", op))
            i += len(op)
            continue
        i = _read_word(line, i, tokens)
    return tokens


def _read_word(line: str, i: int, tokens: list[_Token]) -> int:
    n = len(line)
    text: list[str] = []
    word = Word("")
    start = i
    quoted = False  # '' and "" are words (empty arguments); a lone line continuation is not
    while i < n:
        ch = line[i]
        if ch in " \t\r\n":
            break
        if ch in ";|&<>":
            break
        if ch == "\\":
            if i + 1 >= n:
                raise ShellSyntaxError("the command ends with a lone backslash")
            if line[i + 1] == "\n":  # line continuation
                i += 2
                continue
            text.append(line[i + 1])
            i += 2
            continue
        if ch == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated single quote")
            text.append(line[i + 1 : end])
            i = end + 1
            quoted = True
            continue
        if ch == '"':
            i = _read_double_quoted(line, i + 1, text)
            quoted = True
            continue
        if ch in _UNQUOTED_REFUSED:
            raise ShellSyntaxError(_UNQUOTED_REFUSED[ch])
        if ch == "=" and i > start and not tokens_has_command(tokens) and _is_name(text):
            raise ShellSyntaxError("variable assignments ('NAME=value cmd') are not supported")
        if ch in GLOB_CHARS:
            word.glob = True
        if ch == "~" and i == start:
            word.tilde = True
        text.append(ch)
        i += 1
    word.text = "".join(text)
    if word.text or quoted:
        tokens.append(_Token("word", word.text, word))
    return i


def tokens_has_command(tokens: list[_Token]) -> bool:
    """True when the current simple command already has a word (so '=' is an argument)."""
    for token in reversed(tokens):
        if token.kind == "op":
            return token.value in REDIRECTIONS  # a redirection target precedes: still a command
        return True
    return False


def _is_name(chars: list[str]) -> bool:
    name = "".join(chars)
    return bool(name) and (name[0].isalpha() or name[0] == "_") and name.replace("_", "a").isalnum()


def _read_double_quoted(line: str, i: int, text: list[str]) -> int:
    n = len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            return i + 1
        if ch == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
            if line[i + 1] != "\n":
                text.append(line[i + 1])
            i += 2
            continue
        if ch == "$":
            raise ShellSyntaxError(
                "parameter expansion and command substitution ('$') are not supported, "
                "even inside double quotes; use single quotes for a literal '$'"
            )
        if ch == "`":
            raise ShellSyntaxError("command substitution (backticks) is not supported")
        text.append(ch)
        i += 1
    raise ShellSyntaxError("unterminated double quote")


# ---------------------------------------------------------------------------------------------
# Parser: steps of pipelines of simple commands
# ---------------------------------------------------------------------------------------------


def parse(line: str) -> ShellPlan:
    """The plan for a command line, or ShellSyntaxError naming what is not supported."""
    tokens = tokenize(line)
    steps: list[Step] = []
    op = ""
    pipeline: list[SimpleCommand] = []
    command = SimpleCommand([])
    index = 0

    def end_command(after: str) -> None:
        nonlocal command
        if not command.words:
            if command.redirects:
                raise ShellSyntaxError("a redirection without a command")
            raise ShellSyntaxError(f"syntax error: nothing before {after!r}")
        pipeline.append(command)
        command = SimpleCommand([])

    while index < len(tokens):
        token = tokens[index]
        index += 1
        if token.kind == "word":
            assert token.word is not None
            command.words.append(token.word)
        elif token.value == "|":
            end_command("|")
        elif token.value in SEPARATORS:
            if not command.words and not pipeline and not command.redirects:
                if token.value == "\n" or (token.value == ";" and not steps and not op):
                    continue  # empty lines
                raise ShellSyntaxError(f"syntax error: nothing before {token.value!r}")
            end_command(token.value)
            steps.append(Step(op, pipeline))
            op, pipeline = (";" if token.value == "\n" else token.value), []
        elif token.value in DUPLICATIONS:
            fd, dup_of = DUPLICATIONS[token.value]
            command.redirects.append(Redirect(fd, "dup", dup_of=dup_of))
        else:  # a file redirection: the next token must be a word
            fd, mode = REDIRECTIONS[token.value]
            if index >= len(tokens) or tokens[index].kind != "word":
                raise ShellSyntaxError(f"a file name must follow {token.value!r}")
            target = tokens[index].word
            index += 1
            assert target is not None
            if target.glob:
                raise ShellSyntaxError(f"a redirection target may not be a pattern: {target.text}")
            path = target.text
            if target.tilde:
                path = os.path.expanduser(path)
            command.redirects.append(Redirect(fd, mode, target=path))
    if command.words or command.redirects:
        end_command("the end")
        steps.append(Step(op, pipeline))
    elif pipeline:
        raise ShellSyntaxError("the command ends with '|'")
    elif op in ("&&", "||"):
        raise ShellSyntaxError(f"the command ends with {op!r}")
    if not steps:
        raise ShellSyntaxError("the command is empty")
    return ShellPlan(line, steps)
