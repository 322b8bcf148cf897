"""The memory plugin as the runtime sees it: back-end by config name, tools, CLI."""

from __future__ import annotations

import json

from oryxos_memory.store import MarkdownMemory


def test_markdown_is_the_default_backend(oryxos_runtime):
    memory = oryxos_runtime.memory
    assert isinstance(memory, MarkdownMemory)
    assert memory.path == oryxos_runtime.workspace.memory_dir / "MEMORY.md"


def test_save_and_recall_tools_use_the_runtime_memory(oryxos_runtime):
    catalog = oryxos_runtime.catalog
    assert catalog.groups()["memory"] == ["recall_memory", "save_memory"]
    ctx = catalog.context(runtime=oryxos_runtime, agent="weather")
    save = catalog.build("save_memory", ctx)
    recall = catalog.build("recall_memory", ctx)
    assert save.execute({"text": "User lives in Hangzhou."}, ctx).success
    assert save.execute({"text": "User likes jasmine tea."}, ctx).success
    result = recall.execute({"query": "tea"}, ctx)
    assert result.success and result.content.endswith("] User likes jasmine tea.")
    assert "· weather" in oryxos_runtime.memory.path.read_text()
    assert recall.execute({"query": "golf"}, ctx).content == "No memory entry matches 'golf'."
    empty = save.execute({"text": "  "}, ctx)
    assert not empty.success and empty.retryable


def test_memory_tools_are_always_available_and_unsandboxed(oryxos_runtime):
    catalog = oryxos_runtime.catalog
    for interactive in (True, False):
        ctx = catalog.context(runtime=oryxos_runtime, interactive=interactive)
        assert catalog.tool_names(["@memory"], ctx) == ["recall_memory", "save_memory"]
    for name in ("save_memory", "recall_memory"):
        assert not getattr(catalog.build(name, catalog.context()), "sandbox_args", {})


def test_tools_never_write_user_md(oryxos_runtime):
    user_md = oryxos_runtime.workspace.path / "USER.md"
    user_md.write_text("I am the user's own file.\n")
    ctx = oryxos_runtime.catalog.context(runtime=oryxos_runtime)
    oryxos_runtime.catalog.build("save_memory", ctx).execute({"text": "USER.md note"}, ctx)
    assert user_md.read_text() == "I am the user's own file.\n"
    written = sorted(p.name for p in oryxos_runtime.workspace.memory_dir.iterdir())
    assert written == [".MEMORY.md.lock", "MEMORY.md"]


def test_unknown_backend_makes_the_tools_fail_clearly(oryxos_workspace, oryxos_pm):
    from oryxos.runtime import Runtime

    config = oryxos_workspace.config_file
    config.write_text(config.read_text().replace("backend: markdown", "backend: redis"))
    with Runtime.load(oryxos_workspace, oryxos_pm) as runtime:
        ctx = runtime.catalog.context(runtime=runtime)
        result = runtime.catalog.build("save_memory", ctx).execute({"text": "x"}, ctx)
        assert not result.success
        assert "no memory back-end 'redis' is loaded" in result.error_message


def _fill(workspace, *texts):
    memory = MarkdownMemory(workspace.memory_dir)
    for text in texts:
        memory.save(text)
    return memory


def test_cli_show_and_search(oryxos_cli):
    result = oryxos_cli.invoke(["memory", "show"])
    assert result.exit_code == 0 and result.output.strip() == "Memory is empty."
    _fill(oryxos_cli.workspace, "alpha fact", "beta fact about alpha")
    result = oryxos_cli.invoke(["memory", "show", "--json"])
    data = json.loads(result.output)
    assert [e["text"] for e in data["entries"]] == ["alpha fact", "beta fact about alpha"]
    result = oryxos_cli.invoke(["memory", "search", "beta"])
    assert result.exit_code == 0 and result.output.strip().endswith("] beta fact about alpha")
    result = oryxos_cli.invoke(["memory", "search", "alpha", "--json", "--limit", "1"])
    assert len(json.loads(result.output)["entries"]) == 1


def test_cli_clear_asks_and_keeps_a_backup(oryxos_cli):
    memory = _fill(oryxos_cli.workspace, "keep me safe")
    refused = oryxos_cli.invoke(["memory", "clear"], input="n\n")
    assert refused.exit_code == 1 and "Delete all 1 memory entries?" in refused.output
    assert len(memory.entries()) == 1
    result = oryxos_cli.invoke(["memory", "clear"], input="y\n")
    assert result.exit_code == 0, result.output
    assert memory.entries() == []
    backups = list(memory.directory.glob("MEMORY.md.bak-*"))
    assert len(backups) == 1 and "keep me safe" in backups[0].read_text()
    _fill(oryxos_cli.workspace, "again")
    result = oryxos_cli.invoke(["memory", "clear", "--yes"])
    assert result.exit_code == 0 and memory.entries() == []
    assert len(list(memory.directory.glob("MEMORY.md.bak-*"))) == 2


def test_prompt_builder_gets_the_newest_entries_within_the_limit(oryxos_runtime):
    from oryxos.prompt import PromptBuilder

    folder = oryxos_runtime.workspace.agents_dir / "helper"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text("---\nname: helper\ndescription: Helps.\n---\nHelp.\n")
    memory = oryxos_runtime.memory
    for n in range(200):
        memory.save(f"fact {n:03d}: " + "z" * 40)
    system = PromptBuilder(oryxos_runtime).build(oryxos_runtime.agents.load("helper"), [], [])
    section = system.system.split("## Long-term memory\n", 1)[1]
    assert len(section) <= 4000
    assert section.rstrip().endswith("fact 199: " + "z" * 40)
    assert "fact 000" not in section
    assert section.startswith("(") and "older memory entries not shown" in section
