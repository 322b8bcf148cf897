"""Logging: JSON lines to ``.oryxos/logs/oryxos.log`` (rotated), short lines on the console.

Every handler carries :class:`SecretMaskFilter`, so a secret that reached a log record by any
path (a message, its arguments, an exception) is written as ``***``. Chatty library loggers
(litellm, httpx, mcp ...) are held at WARNING unless ``-vv``.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

from oryxos.secrets import mask

ENV_LOG_LEVEL = "ORYXOS_LOG_LEVEL"
LIBRARY_LOGGERS = (
    "LiteLLM",
    "litellm",
    "httpx",
    "httpcore",
    "mcp",
    "openai",
    "peewee",
    "waitress",
    "urllib3",
    "asyncio",
    "anyio",
)
_HANDLER_MARK = "_oryxos_handler"


class SecretMaskFilter(logging.Filter):
    """Replace every known secret in a record's message and exception text by ``***``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask(message)
        if masked != message or record.args:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        return True


class ConsoleFilter(logging.Filter):
    """Drop records logged with ``extra={"console": False}`` (meant for the file only)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "console", True) is not False


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and any ``extra`` fields."""

    _standard = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in self._standard and not key.startswith("_"):
                entry[key] = value
        if record.exc_text:
            entry["exception"] = record.exc_text
        return mask(json.dumps(entry, ensure_ascii=False, default=str))


class ConsoleFormatter(logging.Formatter):
    """``level: message``; tracebacks only when asked for (``-v``), they are always in the file."""

    def __init__(self, show_tracebacks: bool = False):
        super().__init__()
        self.show_tracebacks = show_tracebacks

    def format(self, record: logging.LogRecord) -> str:
        text = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.exc_text and self.show_tracebacks:
            text += "\n" + record.exc_text
        return text


def _level(name: str | None, default: int) -> int:
    if not name:
        return default
    value = logging.getLevelName(name.upper())
    return value if isinstance(value, int) else default


def setup_logging(
    logs_dir: Path | None = None,
    *,
    verbose: int = 0,
    file_level: str = "INFO",
    max_bytes: int = 10 * 1024 * 1024,
    backup_count: int = 5,
) -> None:
    """Install OryxOS's handlers on the root logger (again, replacing earlier ones).

    Console level: WARNING, INFO with ``-v``, DEBUG with ``-vv``, or ``ORYXOS_LOG_LEVEL``.
    The file handler is added only when ``logs_dir`` exists or can be created.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, _HANDLER_MARK, False):
            root.removeHandler(handler)
            handler.close()
    console_level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    console_level = _level(os.environ.get(ENV_LOG_LEVEL), console_level)
    mask_filter = SecretMaskFilter()

    console = logging.StreamHandler(sys.stderr)
    console.setLevel(console_level)
    console.setFormatter(ConsoleFormatter(show_tracebacks=verbose > 0))
    console.addFilter(mask_filter)
    console.addFilter(ConsoleFilter())
    setattr(console, _HANDLER_MARK, True)
    root.addHandler(console)
    levels = [console_level]

    if logs_dir is not None:
        try:
            logs_dir.mkdir(parents=True, exist_ok=True)
            handler = logging.handlers.RotatingFileHandler(
                logs_dir / "oryxos.log",
                maxBytes=max_bytes,
                backupCount=backup_count,
                encoding="utf-8",
            )
        except OSError:
            handler = None
        if handler is not None:
            level = _level(file_level, logging.INFO)
            handler.setLevel(level)
            handler.setFormatter(JsonFormatter())
            handler.addFilter(mask_filter)
            setattr(handler, _HANDLER_MARK, True)
            root.addHandler(handler)
            levels.append(level)

    root.setLevel(min(levels))
    library_level = logging.DEBUG if verbose >= 3 else logging.WARNING
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(library_level)
    # waitress warns "Task queue depth is N" for every request that waits for a free thread:
    # under load that is one log line per request, which costs more than the request itself.
    logging.getLogger("waitress.queue").setLevel(logging.DEBUG if verbose >= 3 else logging.ERROR)
