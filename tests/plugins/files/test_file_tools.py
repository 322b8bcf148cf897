"""The file tools through the real executor, sandbox and audit table (tests/sandbox_kit.py)."""

from __future__ import annotations

import os
import threading

import pytest

from oryxos.storage import AuditQuery
from oryxos.tools import ToolCall, ToolResult

FILE_TOOLS = [
    "append_file", "copy_file", "delete_file", "edit_file", "glob", "grep", "list_dir",
    "make_dir", "move_file", "read_file", "write_file",
]  # fmt: skip


def call(env, name, case="c", **args) -> ToolResult:
    ctx = env.runtime.catalog.context(session_id=case, extra_read_roots=(env.root / "skill",))
    return env.runtime.executor.run(ToolCall(name, args), ctx)


@pytest.fixture
def env(sandboxed):
    return sandboxed


def test_the_plugin_registers_eleven_tools_in_groups(env):
    catalog = env.runtime.catalog
    assert [e.name for e in catalog.entries() if e.plugin == "files"] == FILE_TOOLS
    assert catalog.groups()["files:read"] == ["glob", "grep", "list_dir", "read_file"]
    assert len(catalog.groups()["files"]) == 11


def test_read_file_with_offset_and_limit(env):
    path = env.root / "data" / "lines.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    whole = call(env, "read_file", path=str(path))
    assert whole.success and whole.content == path.read_text()
    part = call(env, "read_file", path=str(path), offset=3, limit=2)
    assert part.content == "line 3\nline 4\n\n[lines 3-4 of 10; pass offset=5 to read on]"
    past = call(env, "read_file", path=str(path), offset=11)
    assert not past.success and past.retryable and "past the end" in past.error_message


def test_read_file_streams_a_large_file_and_reads_an_empty_one(env):
    path = env.root / "data" / "big.log"
    with open(path, "w") as handle:
        for n in range(1, 300_001):
            handle.write(f"entry {n}\n")
    tail = call(env, "read_file", path=str(path), offset=299_999)
    assert tail.content == "entry 299999\nentry 300000\n\n[lines 299999-300000 of 300000]"
    (env.root / "data" / "empty.txt").write_text("")
    assert call(env, "read_file", path=str(env.root / "data" / "empty.txt")).content == ""


def test_read_file_refuses_binary_directories_and_missing_files(env):
    (env.root / "data" / "blob.bin").write_bytes(b"\x89PNG\x00\x01")
    for path, expected in (
        ("blob.bin", "is a binary file (6 bytes)"),
        ("", "is a directory"),
        ("missing.txt", "does not exist"),
    ):
        result = call(env, "read_file", path=str(env.root / "data" / path))
        assert not result.success and result.retryable
        assert expected in result.error_message


def test_read_file_outside_is_refused_with_the_rule(env):
    result = call(env, "read_file", case="passwd", path="../../etc/passwd")
    assert not result.success and not result.retryable
    assert "sandbox.file.allowed_paths" in result.error_message
    assert [r.success for r in env.audit_rows("passwd")] == [False]


def test_write_file_is_atomic_and_keeps_permissions(env):
    path = env.root / "data" / "out" / "new.txt"
    assert call(env, "write_file", path=str(path), content="one").success
    assert path.read_text() == "one"
    os.chmod(path, 0o640)
    assert call(env, "write_file", path=str(path), content="two ü").success
    assert path.read_text() == "two ü" and (path.stat().st_mode & 0o777) == 0o640
    assert [p.name for p in path.parent.iterdir()] == ["new.txt"]  # no temp file left


def test_edit_file_needs_exactly_one_match(env):
    path = env.root / "data" / "e.txt"
    path.write_text("a = 1\nb = 1\na = 1\n")
    twice = call(env, "edit_file", path=str(path), old_text="a = 1", new_text="a = 2")
    assert not twice.success and twice.retryable and "occurs 2 times" in twice.error_message
    none = call(env, "edit_file", path=str(path), old_text="zzz", new_text="")
    assert not none.success and "does not occur" in none.error_message
    once = call(env, "edit_file", path=str(path), old_text="b = 1", new_text="b = 3")
    assert once.success and path.read_text() == "a = 1\nb = 3\na = 1\n"


def test_append_file_creates_and_appends(env):
    path = env.project / "log.txt"
    call(env, "append_file", path="log.txt", content="a\n")
    call(env, "append_file", path="log.txt", content="b\n")
    assert path.read_text() == "a\nb\n"


def test_list_dir_make_dir_and_delete_file(env):
    assert call(env, "make_dir", path="made/deep").success
    (env.project / "made" / "deep" / "f.txt").write_text("12345")
    listing = call(env, "list_dir", path="made/deep")
    assert listing.content == "f.txt  5 bytes"
    assert "made/" in call(env, "list_dir").content
    refused = call(env, "delete_file", path="made")
    assert not refused.success and "is a directory" in refused.error_message
    assert call(env, "delete_file", path="made/deep/f.txt").success
    assert not (env.project / "made" / "deep" / "f.txt").exists()


def test_move_and_copy_check_both_paths(env):
    src = env.root / "data" / "f.txt"
    outside = env.root / "secret" / "f.txt"
    moved_out = call(env, "move_file", case="mv-out", source=str(src), destination=str(outside))
    assert not moved_out.success and "sandbox.file.allowed_paths" in moved_out.error_message
    copied_in = call(
        env, "copy_file", case="cp-in", source=str(env.root / "secret" / "s.txt"),
        destination=str(env.root / "data" / "stolen.txt"),
    )  # fmt: skip
    assert not copied_in.success and "sandbox.file.allowed_paths" in copied_in.error_message
    assert src.exists() and not outside.exists()
    assert not (env.root / "data" / "stolen.txt").exists()
    assert call(env, "copy_file", source=str(src), destination="copy.txt").success
    assert (env.project / "copy.txt").read_text() == src.read_text()
    exists = call(env, "move_file", source="copy.txt", destination=str(src))
    assert not exists.success and "overwrite=true" in exists.error_message
    assert call(env, "move_file", source="copy.txt", destination="sub/moved.txt").success
    assert (env.project / "sub" / "moved.txt").is_file() and not (env.project / "copy.txt").exists()
    # a skill folder is readable: copying out of it works, writing into it does not
    assert call(
        env, "copy_file", source=str(env.root / "skill" / "SKILL.md"), destination="s.md"
    ).success
    into = call(env, "copy_file", source="s.md", destination=str(env.root / "skill" / "x.md"))
    assert not into.success and not into.retryable


def test_glob_lists_matches_and_hides_what_escapes(env):
    (env.project / "src" / "pkg").mkdir(parents=True)
    (env.project / "src" / "a.py").write_text("")
    (env.project / "src" / "pkg" / "b.py").write_text("")
    os.symlink(env.root / "secret", env.project / "src" / "escape")
    os.symlink(env.root / "secret" / "s.txt", env.project / "src" / "s.py")
    result = call(env, "glob", pattern="**/*.py", path="src")
    assert result.content.splitlines() == [
        "a.py", "pkg/b.py", "[1 matches outside the sandbox not shown]",
    ]  # fmt: skip
    assert "s.txt" not in call(env, "glob", pattern="escape/*", path="src").content
    for bad in ("../*", "/etc/*", "src/../../*"):
        refused = call(env, "glob", pattern=bad)
        assert not refused.success and "may not contain '..'" in refused.error_message


def test_grep_finds_lines_skips_binaries_secrets_and_the_database(env):
    (env.project / "src").mkdir()
    (env.project / "src" / "a.py").write_text("import os\nTOKEN = 1\nprint(token)\n")
    (env.project / "src" / "b.bin").write_bytes(b"TOKEN\x00")
    os.symlink(env.root / "secret" / "s.txt", env.project / "src" / "leak.txt")
    (env.root / "secret" / "s.txt").write_text("TOKEN outside\n")
    result = call(env, "grep", pattern="token", path="src", ignore_case=True)
    assert result.content.splitlines() == ["a.py:2: TOKEN = 1", "a.py:3: print(token)"]
    capped = call(env, "grep", pattern="o", path="src", max_results=1)
    assert capped.content.splitlines() == ["a.py:1: import os", "[stopped at 1 matches]"]
    # the database's header; other workspace files (mcp_servers.yaml) may say "SQLite"
    assert call(env, "grep", pattern="SQLite format 3", path=".oryxos").content == "no matches"
    bad = call(env, "grep", pattern="(")
    assert not bad.success and bad.retryable and "invalid regular expression" in bad.error_message


def test_file_tools_called_by_eight_threads_lose_no_audit_row(env):
    def worker(n: int) -> None:
        for i in range(10):
            call(env, "write_file", case=f"t{n}", path=f"t{n}/{i}.txt", content=str(i))
            call(env, "read_file", case=f"t{n}", path="/etc/hostname")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    audit = env.runtime.storage.audit
    assert audit.tool_invocations(AuditQuery(limit=1)).total == 160
    assert audit.tool_invocations(AuditQuery(success=True, limit=1)).total == 80


def test_special_files_are_never_opened(env):
    """A FIFO would block read_file and grep forever."""
    fifo = env.root / "data" / "pipe"
    os.mkfifo(fifo)
    (env.root / "data" / "t.txt").write_text("findme\n")
    result = call(env, "read_file", path=str(fifo))
    assert not result.success and "not a regular file" in result.error_message
    edit = call(env, "edit_file", path=str(fifo), old_text="a", new_text="b")
    assert not edit.success and "not a regular file" in edit.error_message
    append = call(env, "append_file", path=str(fifo), content="x")
    assert not append.success and "not a regular file" in append.error_message
    found = call(env, "grep", pattern="findme", path=str(env.root / "data"))
    assert found.content == "t.txt:1: findme"


def test_a_symlink_swapped_in_after_the_executor_checked_is_caught_by_the_tool(tmp_path):
    """Defence in depth: the tool checks again, so a directory replaced by a symlink between
    the executor's check and the tool's run (here by a before_tool_call hook) is refused."""
    from sandbox_kit import build

    from oryxos.testing import inline_plugin

    def swap(call, ctx):
        sub = tmp_path / "data" / "sub"
        (sub / "s.txt").unlink()
        sub.rmdir()
        os.symlink(tmp_path / "secret", sub)

    env = build(tmp_path, extra_plugins=[inline_plugin("swapper", oryxos_before_tool_call=swap)])
    try:
        (tmp_path / "data" / "sub").mkdir()
        (tmp_path / "data" / "sub" / "s.txt").write_text("harmless\n")
        result = call(env, "read_file", case="swap", path=str(tmp_path / "data" / "sub" / "s.txt"))
        assert not result.success and not result.retryable
        assert "sandbox.file.allowed_paths" in result.error_message
        assert "top secret" not in str(result)
        assert [r.success for r in env.audit_rows("swap")] == [False]
    finally:
        env.runtime.close()


def test_the_workspace_state_cannot_be_moved_away(env):
    moved = call(env, "move_file", case="mv-state", source=".oryxos", destination="elsewhere")
    assert not moved.success and "sandbox.file.protected" in moved.error_message
    assert (env.project / ".oryxos" / "config.yaml").is_file()
    # the agents inside it are ordinary workspace files
    agent = ".oryxos/agents/default/AGENT.md"
    assert call(env, "copy_file", source=agent, destination="agent-copy.md").success
