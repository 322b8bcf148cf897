"""current_time and json_extract, through the catalog as an agent gets them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest


@pytest.fixture
def run(oryxos_runtime):
    catalog = oryxos_runtime.catalog

    def run(name, **arguments):
        ctx = catalog.context(runtime=oryxos_runtime, config=oryxos_runtime.config)
        return catalog.build(name, ctx).execute(arguments, ctx)

    return run


def test_util_tools_are_registered_in_the_util_group(oryxos_runtime):
    assert oryxos_runtime.catalog.groups()["util"] == ["current_time", "json_extract"]


def test_current_time_in_a_zone_gives_iso_and_human_forms(run):
    result = run("current_time", timezone="Asia/Shanghai")
    assert result.success, result.error_message
    data = json.loads(result.content)
    stamp = datetime.fromisoformat(data["iso8601"])
    assert stamp.utcoffset() == timedelta(hours=8)
    assert abs(stamp.timestamp() - datetime.now().timestamp()) < 5
    assert "CST (UTC+08:00)" in data["human"]
    assert str(stamp.year) in data["human"]


def test_current_time_defaults_to_utc(run):
    data = json.loads(run("current_time").content)
    assert data["timezone"] == "UTC"
    assert data["iso8601"].endswith("+00:00")


@pytest.mark.parametrize(
    "zone", ["Europe/Pari", "Mars/Olympus", "../../etc/passwd", "asia/shanghai"]
)
def test_unknown_zone_is_a_clear_retryable_error(run, zone):
    result = run("current_time", timezone=zone)
    assert not result.success and result.retryable
    assert f"unknown IANA time zone {zone!r}" in result.error_message


def test_unknown_zone_suggests_close_names(run):
    assert "did you mean Europe/Paris" in run("current_time", timezone="Europe/Pari").error_message


def test_tzdata_is_installed_so_zones_work_without_system_files():
    import importlib.util

    assert importlib.util.find_spec("tzdata") is not None


def test_json_extract_uses_jmespath(run):
    doc = json.dumps({"items": [{"name": "a", "price": 5}, {"name": "b", "price": 12}]})
    result = run("json_extract", json_text=doc, expression="items[?price > `10`].name")
    assert json.loads(result.content) == ["b"]
    assert run("json_extract", json_text=doc, expression="length(items)").content == "2"
    assert run("json_extract", json_text=doc, expression="missing").content == "null"


def test_json_extract_schema_names_the_language(oryxos_runtime):
    tool = oryxos_runtime.catalog.build("json_extract", oryxos_runtime.catalog.context())
    assert "JMESPath" in tool.input_schema["properties"]["expression"]["description"]
    assert "JMESPath" in tool.description


def test_json_extract_bad_json_names_the_argument_and_position(run):
    result = run("json_extract", json_text='{"a": ', expression="a")
    assert not result.success and result.retryable
    assert result.error_message.startswith("json_text: not valid JSON at line 1 column 7")


def test_json_extract_bad_expression_is_retryable(run):
    result = run("json_extract", json_text="{}", expression="a[?")
    assert not result.success and result.retryable
    assert result.error_message.startswith("expression: not a valid JMESPath expression")
    assert "\n" not in result.error_message


def test_json_extract_evaluation_error_is_retryable(run):
    result = run("json_extract", json_text='{"a": 1}', expression="length(a)")
    assert not result.success and result.retryable
    assert "cannot be evaluated" in result.error_message
