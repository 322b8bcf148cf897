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
