"""Logging: JSON lines in the workspace log, secrets masked everywhere, libraries tamed."""

from __future__ import annotations

import json
import logging

import pytest

from oryxos.logs import setup_logging
from oryxos.secrets import register_secret


@pytest.fixture
def logs_dir(tmp_path):
    directory = tmp_path / "logs"
    yield directory
    setup_logging(None)  # detach the file handler from the root logger


def test_json_lines_with_extra_fields(logs_dir):
    setup_logging(logs_dir)
    logging.getLogger("oryxos.test").info("hello %s", "world", extra={"session_id": "s1"})
    entry = json.loads((logs_dir / "oryxos.log").read_text().splitlines()[-1])
    assert entry["message"] == "hello world"
    assert entry["level"] == "INFO" and entry["logger"] == "oryxos.test"
    assert entry["session_id"] == "s1"


def test_secrets_are_masked_in_file_and_console(logs_dir, capsys):
    register_secret("sk-very-secret-0001")
    setup_logging(logs_dir)
    log = logging.getLogger("oryxos.test")
    log.warning("key is %s", "sk-very-secret-0001")
    try:
        raise ValueError("bad key sk-very-secret-0001")
    except ValueError:
        log.exception("failed")
    text = (logs_dir / "oryxos.log").read_text()
    assert "sk-very-secret-0001" not in text
    assert "key is ***" in text and "bad key ***" in text
    err = capsys.readouterr().err
    assert "sk-very-secret-0001" not in err and "key is ***" in err


def test_console_level_follows_verbosity_and_environment(logs_dir, capsys, monkeypatch):
    log = logging.getLogger("oryxos.test")
    setup_logging(logs_dir, verbose=0)
    log.info("quiet info")
    assert "quiet info" not in capsys.readouterr().err
    setup_logging(logs_dir, verbose=1)
    log.info("loud info")
    assert "loud info" in capsys.readouterr().err
    monkeypatch.setenv("ORYXOS_LOG_LEVEL", "ERROR")
    setup_logging(logs_dir, verbose=1)
    log.warning("hidden warning")
    assert "hidden warning" not in capsys.readouterr().err


def test_library_loggers_are_held_at_warning(logs_dir):
    setup_logging(logs_dir, verbose=2)
    for name in ("LiteLLM", "httpx", "mcp"):
        assert logging.getLogger(name).level == logging.WARNING


def test_waitress_queue_depth_warnings_are_not_logged(logs_dir, capsys):
    """One warning per queued request under load made `oryxos serve` 25 % slower."""
    setup_logging(logs_dir)
    logging.getLogger("waitress.queue").warning("Task queue depth is %d", 3)
    assert "Task queue depth" not in capsys.readouterr().err
    assert "Task queue depth" not in (logs_dir / "oryxos.log").read_text()
