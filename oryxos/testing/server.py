"""A scripted OpenAI-compatible chat-completions server, for tests, demos and plugin authors.

Two ways to drive it:

- from Python: ``ScriptedModelServer(replies=[Reply.tool(...), Reply.answer(...)])`` (or the
  ``oryxos_model_server`` pytest fixture) answers each request with the next :class:`Reply`;
- from a YAML script, as its own process, so that ``oryxos`` (or ``oryxos serve``) can run offline
  against it::

      python -m oryxos.testing.model_server --script script.yaml --port 8700

  The script's format is :class:`Script` (docs/testing.md has the full reference).

This module needs only the standard library and PyYAML (no pytest), so the examples can start
it with a plain ``pip install -e .``.
"""

from __future__ import annotations

import collections
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oryxos.workspace import Workspace


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
        log: Any = None,
    ):
        self.log = log  # a text file: every request body is appended as one JSON line
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
            if self.log is not None:
                self.log.write(json.dumps(body) + "\n")
                self.log.flush()
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
        return f"http://{self._httpd.server_address[0]}:{self.port}/v1"

    def start(self, host: str = "127.0.0.1", port: int = 0) -> ScriptedModelServer:
        from http.server import ThreadingHTTPServer

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default 5 refuses bursts of concurrent clients
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that closes a kept-alive connection (a pool shutting down, a
                # timeout test) is normal here, not a traceback on stderr.
                import sys

                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self._httpd = Server((host, port), _make_handler(self))
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
        if self.log is not None:
            self.log.close()
            self.log = None

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
        """The same answer as ``chat.completion.chunk`` objects (for ``"stream": true``): the
        text one word per chunk, each tool call in one chunk, then usage if it was asked for."""
        full = self.completion(body, reply)
        base = {k: full[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        message = full["choices"][0]["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        # One piece per word (with the spaces before it), as a model sends tokens.
        for piece in re.findall(r"\s*\S+\s*$|\s*\S+", message["content"] or ""):
            chunks.append(chunk({"content": piece}))
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


# --------------------------------------------------------------------------------------------
# YAML scripts
# --------------------------------------------------------------------------------------------


@dataclass
class Step:
    """One step of a YAML script: when it applies (``when``) and the :class:`Reply` it gives.

    ``times`` is how many requests it answers before it is used up (``repeat: true`` → never
    used up).
    """

    reply: Reply
    contains: str | None = None
    regex: re.Pattern[str] | None = None
    role: str | None = None
    prompt_contains: str | None = None
    times: int | None = 1
    used: int = 0
    index: int = 0

    def matches(self, body: dict[str, Any]) -> bool:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        text = _content_text(last.get("content"))
        if self.role is not None and last.get("role") != self.role:
            return False
        if self.contains is not None and self.contains.lower() not in text.lower():
            return False
        if self.regex is not None and not self.regex.search(text):
            return False
        if self.prompt_contains is not None:
            whole = "\n".join(_content_text(m.get("content")) for m in messages)
            if self.prompt_contains.lower() not in whole.lower():
                return False
        return True

    @property
    def available(self) -> bool:
        return self.times is None or self.used < self.times


def _content_text(content: Any) -> str:
    """The text of an OpenAI message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


STEP_KEYS = {
    "when",
    "answer",
    "tool_calls",
    "status",
    "retry_after",
    "error",
    "delay",
    "times",
    "repeat",
}
WHEN_KEYS = {"contains", "regex", "role", "prompt_contains"}
CALL_KEYS = {"name", "arguments", "raw_arguments"}


class ScriptError(ValueError):
    """A script file that does not follow the format; the message names the step and key."""


class Script:
    """The steps of a YAML script, and how a request picks one.

    A request is answered by the **first step, in file order, that is not used up and whose
    ``when`` accepts the request** (a step without ``when`` accepts any). A used-up step is
    skipped from then on. When no step applies the server answers HTTP 500 "script exhausted"
    — unless the script has a ``fallback`` reply.
    """

    def __init__(self, steps: list[Step], fallback: Reply | None = None, source: str = "script"):
        self.steps = steps
        self.fallback = fallback
        self.source = source
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, environ: dict[str, str] | None = None) -> Script:
        """Read a script file; ``${VAR}`` / ``${VAR:-default}`` are expanded first."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ScriptError(f"{path}: cannot read the script: {err.strerror}") from None
        return cls.parse(text, str(path), environ=environ)

    @classmethod
    def parse(cls, text: str, source: str = "script", environ: dict[str, str] | None = None):
        import yaml

        from oryxos.yamlfile import MissingVariable, expand_vars

        try:
            text = expand_vars(text, environ)
        except MissingVariable as err:
            raise ScriptError(f"{source}: {err}") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise ScriptError(f"{source}: not valid YAML: {err}") from None
        if not isinstance(data, dict) or not isinstance(data.get("steps", []), list):
            raise ScriptError(f"{source}: expected a mapping with a list under 'steps'")
        unknown = set(data) - {"steps", "fallback"}
        if unknown:
            raise ScriptError(
                f"{source}: unknown key(s) {sorted(unknown)}; expected steps, fallback"
            )
        steps = [
            _parse_step(raw, f"{source}: steps[{i}]", i)
            for i, raw in enumerate(data.get("steps") or [])
        ]
        fallback = None
        if data.get("fallback") is not None:
            fallback = _parse_step(data["fallback"], f"{source}: fallback", -1).reply
        return cls(steps, fallback, source)

    def respond(self, body: dict[str, Any]) -> Reply:
        """The reply for one request (thread-safe)."""
        with self._lock:
            for step in self.steps:
                if step.available and step.matches(body):
                    step.used += 1
                    return step.reply
        if self.fallback is not None:
            return self.fallback
        last = (body.get("messages") or [{}])[-1]
        excerpt = _content_text(last.get("content"))[:120]
        return Reply(
            content=f"scripted model server: script exhausted (no step matches {excerpt!r})",
            status=500,
        )

    @property
    def remaining(self) -> int:
        with self._lock:
            return sum(1 for s in self.steps if s.times is not None and s.available)


def _parse_step(raw: Any, where: str, index: int) -> Step:
    if not isinstance(raw, dict):
        raise ScriptError(f"{where}: expected a mapping, got {type(raw).__name__}")
    unknown = set(raw) - STEP_KEYS
    if unknown:
        raise ScriptError(
            f"{where}: unknown key(s) {sorted(unknown)}; expected {sorted(STEP_KEYS)}"
        )
    kinds = [k for k in ("answer", "tool_calls", "status") if k in raw]
    if len(kinds) != 1:
        raise ScriptError(f"{where}: expected exactly one of answer, tool_calls, status")
    if "answer" in raw:
        reply = Reply.answer(str(raw["answer"]))
    elif "tool_calls" in raw:
        calls = raw["tool_calls"]
        if not isinstance(calls, list) or not calls:
            raise ScriptError(f"{where}.tool_calls: expected a non-empty list")
        pairs: list[tuple[str, str]] = []
        for j, call in enumerate(calls):
            if not isinstance(call, dict) or "name" not in call or set(call) - CALL_KEYS:
                raise ScriptError(
                    f"{where}.tool_calls[{j}]: expected name and arguments (a mapping) or "
                    "raw_arguments (a string sent as is, e.g. malformed JSON)"
                )
            if "raw_arguments" in call:
                pairs.append((str(call["name"]), str(call["raw_arguments"])))
            else:
                pairs.append((str(call["name"]), json.dumps(call.get("arguments") or {})))
        reply = Reply(tool_calls=pairs)
    else:
        try:
            status = int(raw["status"])
        except (TypeError, ValueError):
            raise ScriptError(f"{where}.status: expected an HTTP status code") from None
        retry_after = raw.get("retry_after")
        reply = Reply.error(status, retry_after=retry_after)
        reply.content = raw.get("error")
    if raw.get("delay"):
        reply.delay = float(raw["delay"])
    when = raw.get("when") or {}
    if isinstance(when, str):
        when = {"contains": when}
    if not isinstance(when, dict) or set(when) - WHEN_KEYS:
        raise ScriptError(f"{where}.when: expected a string or a mapping of {sorted(WHEN_KEYS)}")
    regex = None
    if when.get("regex") is not None:
        try:
            regex = re.compile(str(when["regex"]), re.IGNORECASE)
        except re.error as err:
            raise ScriptError(
                f"{where}.when.regex: not a valid regular expression: {err}"
            ) from None
    times: int | None = None if raw.get("repeat") else int(raw.get("times", 1))
    return Step(
        reply=reply,
        contains=when.get("contains"),
        regex=regex,
        role=when.get("role"),
        prompt_contains=when.get("prompt_contains"),
        times=times,
        index=index,
    )
