"""Fixtures of the HTTP tool tests: the fake web server and a runtime whitelisting 127.0.0.1."""

from __future__ import annotations

import pytest
import yaml
from http_fakes import FakeWeb

from oryxos.plugins import get_plugin_manager
from oryxos.runtime import Runtime
from oryxos.testing import make_workspace
from oryxos.tools import ToolCall


@pytest.fixture(scope="module")
def web():
    with FakeWeb() as server:
        yield server


class Env:
    def __init__(self, tmp_path, **sections):
        self.downloads = tmp_path / "downloads"
        self.downloads.mkdir(parents=True)
        self.workspace = make_workspace(tmp_path / "project")
        config = yaml.safe_load(self.workspace.config_file.read_text())
        config["sandbox"] = {
            "file": {"allowed_paths": [str(self.downloads)]},
            "http": {"allowed_domains": ["127.0.0.1"]},
        }
        config["http_tools"] = {"timeout_seconds": 2}
        for key, value in sections.items():
            config[key] = {**config.get(key, {}), **value}
        self.workspace.config_file.write_text(yaml.safe_dump(config))
        self.runtime = Runtime.load(self.workspace, get_plugin_manager(environ={}))

    def run(self, tool, **arguments):
        ctx = self.runtime.catalog.context(session_id="http-test")
        return self.runtime.executor.run(ToolCall(tool, arguments), ctx)


@pytest.fixture
def make_env(tmp_path):
    envs = []

    def make(**sections):
        env = Env(tmp_path / str(len(envs)), **sections)
        envs.append(env)
        return env

    yield make
    for env in envs:
        env.runtime.close()


@pytest.fixture
def env(make_env):
    return make_env()
