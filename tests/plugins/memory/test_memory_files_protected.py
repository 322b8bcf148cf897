"""USER.md and the memory folder are never written through file tools, download_file or a
shell redirection: only the memory plugin writes MEMORY.md, under its lock."""

from __future__ import annotations

import pytest

from oryxos.tools import ToolCall


@pytest.fixture
def runtime(oryxos_runtime):
    ws = oryxos_runtime.workspace
    (ws.path / "USER.md").write_text("mine\n")
    oryxos_runtime.memory.save("a fact")
    return oryxos_runtime


def run(runtime, name, **arguments):
    ctx = runtime.catalog.context(session_id="protect")
    return runtime.executor.run(ToolCall(name, arguments), ctx)


@pytest.mark.parametrize(
    "target", ["USER.md", "memory/MEMORY.md", "memory/new.md", "memory/.MEMORY.md.lock"]
)
@pytest.mark.parametrize("tool", ["write_file", "append_file"])
def test_file_tools_cannot_write_user_md_or_memory(runtime, tool, target):
    path = runtime.workspace.path / target
    before = path.read_bytes() if path.exists() else None
    result = run(runtime, tool, path=str(path), content="forged\n")
    assert not result.success and not result.retryable
    assert "sandbox.file.protected" in result.error_message
    assert (path.read_bytes() if path.exists() else None) == before


def test_file_tools_may_still_read_them(runtime):
    result = run(runtime, "read_file", path=str(runtime.workspace.path / "USER.md"))
    assert result.success and "mine" in result.content


def test_memory_folder_cannot_be_deleted_or_moved(runtime):
    memory_file = runtime.workspace.memory_dir / "MEMORY.md"
    assert not run(runtime, "delete_file", path=str(memory_file)).success
    moved = run(
        runtime,
        "move_file",
        source=str(runtime.workspace.memory_dir),
        destination=str(runtime.workspace.project_dir / "elsewhere"),
    )
    assert not moved.success
    assert memory_file.exists() and [e.text for e in runtime.memory.entries()] == ["a fact"]


def test_download_file_cannot_write_user_md(runtime):
    """The tool's own path check (the executor's comes after the URL's, refused here)."""
    ctx = runtime.catalog.context(runtime=runtime)
    tool = runtime.catalog.build("download_file", ctx)
    result = tool.execute(
        {"url": "http://127.0.0.1:9/x", "path": str(runtime.workspace.path / "USER.md")}, ctx
    )
    assert not result.success and "sandbox.file.protected" in result.error_message
    assert (runtime.workspace.path / "USER.md").read_text() == "mine\n"


def test_a_shell_redirection_cannot_write_them(oryxos_workspace, oryxos_pm):
    import yaml

    from oryxos.runtime import Runtime

    config = yaml.safe_load(oryxos_workspace.config_file.read_text())
    config["sandbox"]["shell"]["allowed_commands"] = ["echo"]
    oryxos_workspace.config_file.write_text(yaml.safe_dump(config))
    (oryxos_workspace.path / "USER.md").write_text("mine\n")
    with Runtime.load(oryxos_workspace, oryxos_pm) as runtime:
        for target in (".oryxos/USER.md", ".oryxos/memory/MEMORY.md"):
            result = run(runtime, "shell", command=f"echo forged >> {target}")
            assert not result.success, target
            assert "sandbox.file.protected" in result.error_message
    assert (oryxos_workspace.path / "USER.md").read_text() == "mine\n"
    assert "forged" not in (oryxos_workspace.memory_dir / "MEMORY.md").read_text()
