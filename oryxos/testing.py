"""An opt-in pytest plugin for OryxOS and its plugin authors.

Enable it with ``pytest_plugins = ["oryxos.testing"]`` in a conftest.py (or ``-p
oryxos.testing``). It gives fresh, isolated pieces — never globals:

- ``oryxos_make_pm(plugins=..., entry_points=True, disabled=...)`` → a new plugin manager;
- ``oryxos_pm`` → a new plugin manager with every installed plugin;
- ``oryxos_workspace`` → a workspace created by ``oryxos init`` in a temporary directory;
- ``oryxos_inline_plugin(**hooks)`` → a plugin object made from plain functions;
- ``oryxos_runtime`` → a Runtime on that workspace;
- ``oryxos_cli`` → runs ``oryxos ...`` in-process on that workspace, optionally with inline
  plugins, and returns click's Result;
- ``oryxos_model_server`` → a started :class:`ScriptedModelServer`, an OpenAI-compatible
  chat-completions server on 127.0.0.1 that answers from a script of :class:`Reply` objects;
  :func:`use_model_server` points a workspace's provider at it.
"""

from __future__ import annotations

import collections
import itertools
import json
import threading
import time
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from oryxos import hookimpl
from oryxos.plugins import PluginManager, get_plugin_manager
from oryxos.workspace import Workspace

ORYXOS_ENV = (
    "ORYXOS_WORKSPACE",
    "ORYXOS_DISABLE_PLUGINS",
    "ORYXOS_LOAD_PLUGINS",
    "ORYXOS_TRACE_PLUGINS",
    "ORYXOS_LOG_LEVEL",
)


def inline_plugin(name: str = "inline", **hooks: Callable[..., Any]) -> tuple[str, object]:
    """A ``(name, plugin)`` pair whose hooks are the given functions (marked as hookimpls).

    >>> inline_plugin("hello", oryxos_register_tools=lambda catalog: ...)
    """
    plugin = types.SimpleNamespace(__name__=f"inline:{name}")
    for hook_name, fn in hooks.items():
        setattr(plugin, hook_name, hookimpl(fn))
    return name, plugin


def make_workspace(directory: Path) -> Workspace:
    """Create a workspace as ``oryxos init`` does, in ``directory``."""
    from oryxos.commands.init import create_workspace

    workspace = Workspace(directory / ".oryxos")
    create_workspace(workspace.path)
    return workspace


class CliInvoker:
    """Runs the ``oryxos`` CLI in-process against one workspace."""

    def __init__(self, workspace: Workspace):
        self.workspace = workspace

    def invoke(
        self,
        args: Sequence[str],
        *,
        plugins: Iterable[tuple[str, object]] = (),
        input: str | None = None,
        env: dict[str, str] | None = None,
        entry_points: bool = True,
    ) -> Any:
        from click.testing import CliRunner

        from oryxos.cli import build_cli
        from oryxos.commands import CliState
        from oryxos.runtime import disabled_plugins_for

        pm = get_plugin_manager(
            disabled=disabled_plugins_for(self.workspace),
            plugins=list(plugins),
            entry_points=entry_points,
            environ=env,
        )
        cli = build_cli(pm)
        runner = CliRunner()
        return runner.invoke(
            cli,
            ["--workspace", str(self.workspace.path), *args],
            input=input,
            env=env,
            obj=CliState(pm=pm),
            catch_exceptions=False,
        )


@pytest.fixture(autouse=True)
def _oryxos_clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ORYXOS_* variable of the developer's shell leaks into a test."""
    for name in ORYXOS_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def oryxos_make_pm() -> Callable[..., PluginManager]:
    def make(
        plugins: Iterable[tuple[str, object]] = (),
        *,
        entry_points: bool = True,
        disabled: Iterable[str] = (),
        environ: dict[str, str] | None = None,
    ) -> PluginManager:
        return get_plugin_manager(
            plugins=plugins, entry_points=entry_points, disabled=disabled, environ=environ or {}
        )

    return make


@pytest.fixture
def oryxos_pm(oryxos_make_pm: Callable[..., PluginManager]) -> PluginManager:
    return oryxos_make_pm()


@pytest.fixture
def oryxos_inline_plugin() -> Callable[..., tuple[str, object]]:
    return inline_plugin


@pytest.fixture
def oryxos_workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path)


@pytest.fixture
def oryxos_runtime(oryxos_workspace: Workspace, oryxos_pm: PluginManager) -> Any:
    from oryxos.runtime import Runtime

    runtime = Runtime.load(oryxos_workspace, oryxos_pm)
    yield runtime
    runtime.close()


@pytest.fixture
def oryxos_cli(oryxos_workspace: Workspace) -> CliInvoker:
    return CliInvoker(oryxos_workspace)


# --------------------------------------------------------------------------------------------
# A scripted OpenAI-compatible chat-completions server (real HTTP on 127.0.0.1)
# --------------------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer of :class:`ScriptedModelServer`; build it with the class methods.

    ``tool_calls`` holds ``(name, raw JSON arguments)`` pairs; ``status`` other than 200 makes
    an error response (with ``headers``, e.g. Retry-After); ``delay`` waits before answering.
    """

    content: str | None = None
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def answer(cls, text: str) -> Reply:
        """A final answer (no tool call)."""
        return cls(content=text)

    @classmethod
    def tool(cls, name: str, arguments: dict[str, Any] | None = None) -> Reply:
        """One tool call with these (JSON-encoded) arguments."""
        return cls.tools((name, arguments or {}))

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any] | str]) -> Reply:
        """Several tool calls in one reply; a str argument is sent as is (maybe malformed)."""
        return cls(
            tool_calls=[
                (name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls
            ]
        )

    @classmethod
    def malformed(cls, name: str, raw_arguments: str = '{"path": ') -> Reply:
        """A tool call whose arguments are not valid JSON."""
        return cls(tool_calls=[(name, raw_arguments)])

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None) -> Reply:
        """An HTTP error (429, 500, ...), with a Retry-After header if given."""
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        return cls(status=status, headers=headers)

    def after(self, seconds: float) -> Reply:
        """The same reply, sent after ``seconds`` (to test timeouts and slow models)."""
        self.delay = seconds
        return self


class ScriptedModelServer:
    """An OpenAI-compatible ``/v1/chat/completions`` server that answers from a script.

    Each request takes the next :class:`Reply` of the script; when the script is empty,
    ``responder(request_body)`` is asked (if set), else the server answers HTTP 500 "script
    exhausted". Answers plain JSON, or SSE chunks when the request says ``"stream": true``.
    Every request body is kept in :attr:`requests`. Runs in a thread on 127.0.0.1, port 0.
    """

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        responder: Callable[[dict[str, Any]], Reply] | None = None,
    ):
        self._script: collections.deque[Reply] = collections.deque(replies)
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._counter = itertools.count(1)
        self._httpd: Any = None
        self._thread: threading.Thread | None = None

    # Script -------------------------------------------------------------------------------

    def script(self, *replies: Reply) -> ScriptedModelServer:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def _next(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return Reply(content="scripted model server: script exhausted", status=500)

    # Lifecycle ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL to use as ``api_base`` (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedModelServer:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 refuses bursts of concurrent clients
            daemon_threads = True

        self._httpd = Server(("127.0.0.1", 0), _make_handler(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="oryxos-model-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # Responses ----------------------------------------------------------------------------

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The chat.completion object for ``reply``."""
        n = next(self._counter)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": args},
                }
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        prompt_tokens = len(json.dumps(body.get("messages", []))) // 4 + 1
        completion_tokens = len(json.dumps(message)) // 4 + 1
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def stream_chunks(self, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
        """The same answer as ``chat.completion.chunk`` objects (for ``"stream": true``)."""
        full = self.completion(body, reply)
        base = {k: full[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        message = full["choices"][0]["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        if message["content"]:
            chunks.append(chunk({"content": message["content"]}))
        for index, call in enumerate(message.get("tool_calls", [])):
            chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
        chunks.append(chunk({}, full["choices"][0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": full["usage"]})
        return chunks


def _make_handler(server: ScriptedModelServer) -> type:
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: clients reuse their connections
        disable_nagle_algorithm = True  # without it every response waits ≈ 40 ms

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str]):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            data = json.dumps({"object": "list", "data": [{"id": "scripted"}]}).encode()
            self._send(200, data, "application/json", {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}', "application/json", {})
                return
            reply = server._next(body)
            if reply.delay:
                time.sleep(reply.delay)
            try:
                if reply.status != 200:
                    error = {
                        "error": {
                            "message": reply.content or f"scripted HTTP {reply.status}",
                            "type": "scripted_error",
                            "code": reply.status,
                        }
                    }
                    self._send(
                        reply.status, json.dumps(error).encode(), "application/json", reply.headers
                    )
                elif body.get("stream"):
                    events = "".join(
                        f"data: {json.dumps(c)}\n\n" for c in server.stream_chunks(body, reply)
                    )
                    self._send(200, (events + "data: [DONE]\n\n").encode(), "text/event-stream", {})
                else:
                    data = json.dumps(server.completion(body, reply)).encode()
                    self._send(200, data, "application/json", {})
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    return Handler


def use_model_server(
    workspace: Workspace,
    server: ScriptedModelServer,
    *,
    name: str = "default",
    model: str = "scripted-model",
    **settings: Any,
) -> None:
    """Point provider ``name`` of the workspace's config.yaml at ``server``.

    The provider uses litellm's OpenAI-compatible path (``openai/<model>``) with a literal test
    key; ``settings`` (timeout, max_retries, retry_backoff, params) are written as given. It
    becomes ``default_provider`` too.
    """
    import yaml

    path = workspace.config_file
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    providers = data.get("providers") or {}
    providers[name] = {
        "model": f"openai/{model}",
        "api_base": server.url,
        "api_key": "sk-scripted-test",
        **settings,
    }
    data["providers"] = providers
    data["default_provider"] = name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


@pytest.fixture
def oryxos_model_server() -> Any:
    """A started :class:`ScriptedModelServer` (script it with ``.script(Reply...)``)."""
    server = ScriptedModelServer().start()
    yield server
    server.stop()
