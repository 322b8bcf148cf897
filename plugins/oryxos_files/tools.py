"""The file tools. Each is a small :class:`~oryxos.tools.Tool` with an explicit schema.

Expected problems (a missing file, a directory where a file was wanted, an edit snippet that
is not unique) are retryable ToolResults with a message the model can act on; sandbox refusals
are raised as :class:`~oryxos.sandbox.SandboxViolation` and become non-retryable results.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from oryxos.catalog import ToolContext
from oryxos.errors import OryxError
from oryxos.tools import Tool, ToolResult

BINARY_PROBE_BYTES = 8192
DEFAULT_READ_LINES = 2000
MAX_LIST_ENTRIES = 1000
MAX_LINE_CHARS = 500
MAX_GREP_FILE_BYTES = 20 * 1024 * 1024  # larger files are skipped by grep (logs, dumps)


# Schemas are sent with every model request, so every byte counts (docs/benchmarks.md, prompt
# tokens): descriptions are one short sentence and obvious arguments have none.
def _string(description: str = "") -> dict[str, Any]:
    return {"type": "string", "description": description} if description else {"type": "string"}


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:  # an empty "required" list says nothing and costs tokens
        schema["required"] = required
    return schema


PATH = _string()
INTEGER = {"type": "integer", "minimum": 1}
BOOLEAN = {"type": "boolean"}


def checked(ctx: ToolContext, value: str, *, write: bool = False) -> Path:
    """The real path of ``value`` if the sandbox allows it (SandboxViolation otherwise)."""
    runtime = getattr(ctx, "runtime", None)
    if runtime is None:
        raise OryxError("file tools run only through a runtime (they need its sandbox)")
    return runtime.sandbox.check_path(value, write=write, ctx=ctx)


def is_binary(data: bytes) -> bool:
    """Heuristic used by git and grep: a NUL byte in the first block means binary."""
    return b"\x00" in data[:BINARY_PROBE_BYTES]


def atomic_write(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory and rename it over ``path``, so a
    reader never sees a half-written file; an existing file keeps its permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _missing(path: Path) -> ToolResult:
    return ToolResult.fail(f"{path} does not exist", retryable=True)


def _not_readable(path: Path) -> ToolResult | None:
    """Why ``path`` cannot be read as a file: missing, a directory, or special (a FIFO or
    device would block or never end), else None."""
    if not path.exists():
        return _missing(path)
    if path.is_dir():
        return ToolResult.fail(f"{path} is a directory; use list_dir", retryable=True)
    if not path.is_file():
        return ToolResult.fail(f"{path} is not a regular file", retryable=True)
    return None


def _read_text(path: Path) -> str | ToolResult:
    problem = _not_readable(path)
    if problem:
        return problem
    data = path.read_bytes()
    if is_binary(data):
        return ToolResult.fail(f"{path} is a binary file ({len(data)} bytes)", retryable=True)
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


class ReadFile(Tool):
    name = "read_file"
    description = "Read a text file; for large files pass offset (first line, from 1) and limit."
    input_schema = _schema(["path"], path=PATH, offset=INTEGER, limit=INTEGER)
    sandbox_args = {"path": "file"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"])
        problem = _not_readable(path)
        if problem:
            return problem
        offset = input.get("offset", 1)
        limit = input.get("limit", DEFAULT_READ_LINES)
        chosen: list[str] = []
        total = 0
        # Streamed, so that reading 20 lines of a 5 GB log costs 20 lines of memory.
        with open(path, "rb") as handle:
            if is_binary(handle.peek(BINARY_PROBE_BYTES)):
                size = path.stat().st_size
                return ToolResult.fail(f"{path} is a binary file ({size} bytes)", retryable=True)
            for total, line in enumerate(handle, 1):
                if offset <= total < offset + limit:
                    chosen.append(line.decode("utf-8", errors="replace"))
        if total and offset > total:
            return ToolResult.fail(
                f"offset {offset} is past the end of {path} ({total} lines)", retryable=True
            )
        content = "".join(chosen)
        last = offset - 1 + len(chosen)
        if offset > 1 or last < total:
            more = f"; pass offset={last + 1} to read on" if last < total else ""
            content += f"\n[lines {offset}-{last} of {total}{more}]"
        return ToolResult.ok(content)


class ListDir(Tool):
    name = "list_dir"
    description = "List a directory (default: the project directory)."
    input_schema = _schema([], path=PATH)
    sandbox_args = {"path": "file"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input.get("path") or ".")
        if not path.exists():
            return _missing(path)
        if not path.is_dir():
            return ToolResult.fail(f"{path} is not a directory", retryable=True)
        entries = sorted(path.iterdir(), key=lambda p: p.name)
        lines = []
        for entry in entries[:MAX_LIST_ENTRIES]:
            if entry.is_symlink():
                lines.append(f"{entry.name} -> {os.readlink(entry)}")
            elif entry.is_dir():
                lines.append(f"{entry.name}/")
            else:
                lines.append(f"{entry.name}  {entry.stat().st_size} bytes")
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"[{len(entries) - MAX_LIST_ENTRIES} more entries not shown]")
        return ToolResult.ok("\n".join(lines) if lines else f"{path} is empty")


def _relative_pattern(pattern: str, what: str) -> str | None:
    """An error message if a pattern could leave the directory it is applied to."""
    if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts or "\x00" in pattern:
        return f"{what} must be relative to 'path' and may not contain '..'"
    return None


class Glob(Tool):
    name = "glob"
    description = "Find files matching a glob pattern such as **/*.py under path."
    input_schema = _schema(["pattern"], pattern=PATH, path=PATH, max_results=INTEGER)
    sandbox_args = {"path": "file"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = input["pattern"]
        problem = _relative_pattern(pattern, "the pattern")
        if problem:
            return ToolResult.fail(problem, retryable=True)
        root = checked(ctx, input.get("path") or ".")
        if not root.is_dir():
            return ToolResult.fail(f"{root} is not a directory", retryable=True)
        limit = input.get("max_results", 500)
        fence = _Fence(ctx)
        found: list[str] = []
        skipped = 0
        for match in sorted(root.glob(pattern)):
            if not fence.allows(match):
                skipped += 1
                continue
            found.append(str(match.relative_to(root)) + ("/" if match.is_dir() else ""))
            if len(found) >= limit:
                found.append(f"[stopped at {limit} results]")
                break
        if skipped:
            found.append(f"[{skipped} matches outside the sandbox not shown]")
        return ToolResult.ok("\n".join(found) if found else "no matches")


class _Fence:
    """The sandbox's read rule for many files at once (one whitelist look-up, not one per
    file): a found file is usable when its real path is inside an allowed root and is not
    protected. Symlinks and symlinked directories met while walking are caught here."""

    def __init__(self, ctx: ToolContext):
        sandbox = ctx.runtime.sandbox  # type: ignore[union-attr]
        self.roots = sandbox.file_roots(ctx=ctx)
        self.protected = sandbox.protected_paths()

    def allows(self, path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return real not in self.protected and any(real.is_relative_to(r) for r in self.roots)


class Grep(Tool):
    name = "grep"
    description = "Search files under path for a regular expression; prints file:line: text."
    input_schema = _schema(
        ["pattern"],
        pattern=PATH,
        path=PATH,
        include=_string("file-name glob, e.g. *.py"),
        ignore_case=BOOLEAN,
        max_results=INTEGER,
    )
    sandbox_args = {"path": "file"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            regex = re.compile(input["pattern"], re.IGNORECASE if input.get("ignore_case") else 0)
        except re.error as err:
            return ToolResult.fail(f"invalid regular expression: {err}", retryable=True)
        root = checked(ctx, input.get("path") or ".")
        if not root.exists():
            return _missing(root)
        limit = input.get("max_results", 200)
        include = input.get("include")
        fence = _Fence(ctx)
        base = root if root.is_dir() else root.parent
        matches: list[str] = []
        for file in _walk(root):
            if include and not file.match(include):
                continue
            if not fence.allows(file):
                continue
            if _search(file, regex, base, matches, limit):
                matches.append(f"[stopped at {limit} matches]")
                break
        return ToolResult.ok("\n".join(matches) if matches else "no matches")


def _walk(root: Path):
    """Files under root (or root itself), without following directory symlinks; hidden
    directories such as .git are skipped."""
    if root.is_file():
        yield root
        return
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            yield Path(directory) / name


def _search(file: Path, regex: re.Pattern[str], base: Path, out: list[str], limit: int) -> bool:
    """Append matches of one file; True when the limit is reached."""
    try:
        if not file.is_file() or file.stat().st_size > MAX_GREP_FILE_BYTES:
            return False
        data = file.read_bytes()
    except OSError:
        return False
    if is_binary(data):
        return False
    shown = file.relative_to(base) if file.is_relative_to(base) else file
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if regex.search(line):
            out.append(f"{shown}:{number}: {line[:MAX_LINE_CHARS]}")
            if len(out) >= limit:
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


class WriteFile(Tool):
    name = "write_file"
    description = "Create or overwrite a file."
    input_schema = _schema(["path", "content"], path=PATH, content=PATH)
    sandbox_args = {"path": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"], write=True)
        if path.is_dir():
            return ToolResult.fail(f"{path} is a directory", retryable=True)
        data = input["content"].encode("utf-8")
        atomic_write(path, data)
        return ToolResult.ok(f"wrote {len(data)} bytes to {path}")


class EditFile(Tool):
    name = "edit_file"
    description = "Replace old_text, which must occur exactly once in the file, with new_text."
    input_schema = _schema(
        ["path", "old_text", "new_text"], path=PATH, old_text=PATH, new_text=PATH
    )
    sandbox_args = {"path": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"], write=True)
        text = _read_text(path)
        if isinstance(text, ToolResult):
            return text
        old = input["old_text"]
        if not old:
            return ToolResult.fail("old_text may not be empty", retryable=True)
        count = text.count(old)
        if count != 1:
            detail = "does not occur" if count == 0 else f"occurs {count} times"
            hint = "" if count == 0 else "; include more surrounding text to make it unique"
            return ToolResult.fail(f"old_text {detail} in {path}{hint}", retryable=True)
        atomic_write(path, text.replace(old, input["new_text"], 1).encode("utf-8"))
        return ToolResult.ok(f"edited {path}")


class AppendFile(Tool):
    name = "append_file"
    description = "Append text to a file."
    input_schema = _schema(["path", "content"], path=PATH, content=PATH)
    sandbox_args = {"path": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"], write=True)
        if path.exists() and not path.is_file():
            return ToolResult.fail(f"{path} is not a regular file", retryable=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = input["content"].encode("utf-8")
        with open(path, "ab") as handle:
            handle.write(data)
        return ToolResult.ok(f"appended {len(data)} bytes to {path}")


class MakeDir(Tool):
    name = "make_dir"
    description = "Create a directory and its parents."
    input_schema = _schema(["path"], path=PATH)
    sandbox_args = {"path": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"], write=True)
        if path.exists() and not path.is_dir():
            return ToolResult.fail(f"{path} exists and is not a directory", retryable=True)
        path.mkdir(parents=True, exist_ok=True)
        return ToolResult.ok(f"directory {path} exists")


_TRANSFER_SCHEMA = _schema(
    ["source", "destination"], source=PATH, destination=PATH, overwrite=BOOLEAN
)


def _transfer_target(source: Path, destination: Path, overwrite: bool) -> ToolResult | None:
    if not source.exists():
        return _missing(source)
    if destination.is_dir():
        return ToolResult.fail(
            f"{destination} is a directory; give the full new path", retryable=True
        )
    if destination.exists() and not overwrite:
        return ToolResult.fail(
            f"{destination} exists; pass overwrite=true to replace it", retryable=True
        )
    return None


class MoveFile(Tool):
    name = "move_file"
    description = "Move or rename a file or directory."
    input_schema = _TRANSFER_SCHEMA
    sandbox_args = {"source": "file_write", "destination": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        source = checked(ctx, input["source"], write=True)
        destination = checked(ctx, input["destination"], write=True)
        problem = _transfer_target(source, destination, input.get("overwrite", False))
        if problem:
            return problem
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, destination)
        return ToolResult.ok(f"moved {source} to {destination}")


class CopyFile(Tool):
    name = "copy_file"
    description = "Copy a file."
    input_schema = _TRANSFER_SCHEMA
    sandbox_args = {"source": "file", "destination": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        source = checked(ctx, input["source"])
        destination = checked(ctx, input["destination"], write=True)
        problem = _transfer_target(source, destination, input.get("overwrite", False))
        if problem:
            return problem
        if source.is_dir():
            return ToolResult.fail(
                f"{source} is a directory; copy_file copies files", retryable=True
            )
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
        return ToolResult.ok(f"copied {source} to {destination}")


class DeleteFile(Tool):
    name = "delete_file"
    description = "Delete a file (not a directory)."
    input_schema = _schema(["path"], path=PATH)
    sandbox_args = {"path": "file_write"}  # noqa: RUF012

    def execute(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = checked(ctx, input["path"], write=True)
        if not path.exists():
            return _missing(path)
        if path.is_dir():
            return ToolResult.fail(
                f"{path} is a directory; delete_file deletes files only", retryable=True
            )
        path.unlink()
        return ToolResult.ok(f"deleted {path}")


READ_TOOLS: tuple[type[Tool], ...] = (ReadFile, ListDir, Glob, Grep)
WRITE_TOOLS: tuple[type[Tool], ...] = (
    WriteFile,
    EditFile,
    AppendFile,
    MakeDir,
    MoveFile,
    CopyFile,
    DeleteFile,
)
