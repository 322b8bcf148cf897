"""Built-in utility tools: ``current_time`` and ``json_extract`` (pure computation, no sandbox).

Both need nothing from the workspace and touch neither files nor the network, so they are
always available. ``jmespath`` is imported only when ``json_extract`` runs.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from oryxos import hookimpl
from oryxos.tools import Tool, ToolResult

GROUP = "util"


class CurrentTimeTool(Tool):
    """``current_time``: now, in an IANA time zone (zoneinfo; tzdata supplies the zones)."""

    name = "current_time"
    description = "The current date and time in an IANA time zone, in ISO 8601 and in words."
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "timezone": {
                "type": "string",
                "description": "IANA time zone name, e.g. Asia/Shanghai, Europe/Paris or UTC",
                "default": "UTC",
            }
        },
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        return current_time(str(input.get("timezone") or "UTC"))


def current_time(timezone: str = "UTC") -> ToolResult:
    """The current time in ``timezone``; an unknown zone is a retryable error with suggestions."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = timezone.strip() or "UTC"
    try:
        zone = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ToolResult.fail(_unknown_zone_message(name), retryable=True)
    now = datetime.now(zone)
    offset = now.strftime("%z")
    offset = f"UTC{offset[:3]}:{offset[3:]}" if offset else "UTC"
    return ToolResult.ok(
        json.dumps(
            {
                "timezone": name,
                "iso8601": now.isoformat(timespec="seconds"),
                "human": f"{now:%A, %d %B %Y, %H:%M:%S} {now.tzname()} ({offset})",
                "unix": int(now.timestamp()),
            },
            ensure_ascii=False,
        )
    )


def _unknown_zone_message(name: str) -> str:
    """Say the zone is unknown and suggest close IANA names (case-insensitive)."""
    import difflib
    from zoneinfo import available_timezones

    zones = available_timezones()
    by_lower = {zone.lower(): zone for zone in zones}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(by_lower[c] for c in close)}?" if close else ""
    return (
        f"timezone: unknown IANA time zone {name!r} "
        f"(expected a name such as Asia/Shanghai, America/New_York or UTC){hint}"
    )


class JsonExtractTool(Tool):
    """``json_extract``: JMESPath over JSON text.

    JMESPath rather than JSONPath: it has one specification with a compliance test suite, so
    the model's expressions mean the same everywhere, and the ``jmespath`` package is small,
    pure Python and well kept (it is what the AWS CLI's ``--query`` uses).
    """

    name = "json_extract"
    description = (
        "Extract values from JSON text with a JMESPath expression (not JSONPath); "
        "the result is JSON."
    )
    input_schema = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "json_text": {"type": "string", "description": "the JSON document, as text"},
            "expression": {
                "type": "string",
                "description": "JMESPath expression, e.g. items[?price > `10`].name",
            },
        },
        "required": ["json_text", "expression"],
        "additionalProperties": False,
    }

    def execute(self, input: dict[str, Any], ctx: Any) -> ToolResult:
        return json_extract(str(input["json_text"]), str(input["expression"]))


def json_extract(json_text: str, expression: str) -> ToolResult:
    """Apply ``expression`` to the parsed ``json_text``; bad JSON or syntax is retryable."""
    import jmespath
    from jmespath.exceptions import JMESPathError

    try:
        document: Any = json.loads(json_text)
    except json.JSONDecodeError as err:
        return ToolResult.fail(
            f"json_text: not valid JSON at line {err.lineno} column {err.colno}: {err.msg}",
            retryable=True,
        )
    try:
        compiled = jmespath.compile(expression)
    except JMESPathError as err:
        detail = str(err).replace("\n", " ")
        message = f"expression: not a valid JMESPath expression: {detail}"
        return ToolResult.fail(message, retryable=True)
    try:
        value = compiled.search(document)
    except JMESPathError as err:
        detail = str(err).replace("\n", " ")
        message = f"expression: cannot be evaluated on this JSON: {detail}"
        return ToolResult.fail(message, retryable=True)
    return ToolResult.ok(json.dumps(value, ensure_ascii=False))


@hookimpl
def oryxos_register_tools(catalog: Any) -> None:
    catalog.register(CurrentTimeTool(), groups=[GROUP])
    catalog.register(JsonExtractTool(), groups=[GROUP])
