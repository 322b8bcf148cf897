"""Tests of the example plugin, written the way a plugin author would write them."""

pytest_plugins = ["oryxos.testing"]


def test_hello_is_listed_by_oryxos_plugins(oryxos_cli):
    import json

    result = oryxos_cli.invoke(["plugins", "--json"])
    assert result.exit_code == 0, result.output
    plugins = {p["name"]: p for p in json.loads(result.output)["plugins"]}
    assert plugins["hello"]["distribution"] == "oryxos-plugin-hello"
    assert "oryxos_register_tools" in plugins["hello"]["hooks"]


def test_hello_command(oryxos_cli):
    result = oryxos_cli.invoke(["hello", "Ada"])
    assert result.exit_code == 0
    assert result.output.strip() == "Hello, Ada!"


def test_hello_tool_is_in_the_catalog(oryxos_runtime):
    catalog = oryxos_runtime.catalog
    assert catalog.get("hello").plugin == "hello"
    tool = catalog.build("hello", catalog.context())
    assert tool.execute({"name": "Bo"}, catalog.context()).content == "Hello, Bo!"


def test_an_agent_uses_the_hello_tool_in_a_real_turn(
    oryxos_workspace, oryxos_cli, oryxos_model_server
):
    """docs/testing.md's example: the scripted model calls the tool, the real loop runs it."""
    from oryxos.testing import Reply, use_model_server

    agent = oryxos_workspace.agents_dir / "default" / "AGENT.md"
    agent.write_text(
        agent.read_text().replace("  - current_time\n", "  - current_time\n  - hello\n")
    )
    use_model_server(oryxos_workspace, oryxos_model_server, max_retries=0)
    oryxos_model_server.script(Reply.tool("hello", {"name": "Ada"}), Reply.answer("done"))
    result = oryxos_cli.invoke(["chat", "-m", "greet Ada"])
    assert result.exit_code == 0, result.output
    assert "done" in result.output
    tool_result = oryxos_model_server.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and tool_result["content"] == "Hello, Ada!"
