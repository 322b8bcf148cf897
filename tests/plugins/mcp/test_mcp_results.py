"""CallToolResult → ToolResult, on the SDK's own result types, and concurrent calls."""

from __future__ import annotations

import threading

import mcp_types as types
import pytest
from mcp_helpers import npm_server
from oryxos_mcp.proxy import to_tool_result


def result(content, structured=None, is_error=False):
    return types.CallToolResult(content=content, structured_content=structured, is_error=is_error)


def test_text_parts_are_joined():
    converted = to_tool_result(
        result([types.TextContent(type="text", text="a"), types.TextContent(type="text", text="b")])
    )
    assert converted.success and converted.content == "a\nb"


def test_structured_content_is_used_when_there_is_no_text():
    converted = to_tool_result(result([], structured={"temp": 21, "city": "Zürich"}))
    assert converted.content == '{"temp": 21, "city": "Zürich"}'


def test_text_wins_over_structured_content_when_both_are_given():
    converted = to_tool_result(
        result([types.TextContent(type="text", text="21 degrees")], structured={"temp": 21})
    )
    assert converted.content == "21 degrees"


def test_binary_content_is_described_not_inlined():
    converted = to_tool_result(
        result(
            [
                types.ImageContent(type="image", data="QUJD" * 100, mime_type="image/png"),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(uri="file:///r.txt", text="inline text"),
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="file:///r.bin", blob="AAAA", mime_type="application/zip"
                    ),
                ),
                types.ResourceLink(type="resource_link", uri="file:///doc.md", name="doc"),
            ]
        )
    )
    assert converted.content.splitlines() == [
        "[image image/png: 400 base64 characters not shown]",
        "inline text",
        "[resource file:///r.bin: application/zip]",
        "[resource file:///doc.md doc]",
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        ([types.TextContent(type="text", text="bad input")], "bad input"),
        ([], "the tool reported an error without a message"),
    ],
)
def test_is_error_is_a_failed_retryable_result(content, message):
    converted = to_tool_result(result(content, is_error=True))
    assert not converted.success and converted.retryable
    assert converted.error_message == message


@pytest.mark.slow
def test_a_real_image_result_and_concurrent_calls_from_many_threads(
    write_servers, fast_timeouts, make_runtime
):
    fast_timeouts()
    write_servers(f"servers:\n  - name: ev\n    command: {npm_server('mcp-server-everything')}\n")
    runtime = make_runtime()
    ctx = runtime.catalog.context()
    image = runtime.catalog.build("get-tiny-image", ctx).execute({}, ctx)
    assert image.success and "[image image/png:" in image.content

    echo = runtime.catalog.build("echo", ctx)
    failures: list[str] = []

    def worker(n: int) -> None:
        for i in range(25):
            got = echo.execute({"message": f"{n}-{i}"}, ctx)
            if got.content != f"Echo: {n}-{i}":
                failures.append(f"{n}-{i}: {got}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
