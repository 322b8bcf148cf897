"""The built-in ``/api/v1`` endpoints, declared on an :class:`oryxos_web.api.Api`."""

from __future__ import annotations

import threading
import time
from typing import Any

from oryxos import __version__
from oryxos.storage import AuditQuery
from oryxos_web import models as m
from oryxos_web import services
from oryxos_web.api import Api
from oryxos_web.errors import ApiError


def declare(api: Api, runtime: Any) -> None:
    """Declare every built-in endpoint for one runtime."""
    _system(api, runtime)
    _sessions(api, runtime)
    _agents(api, runtime)
    _sandbox(api, runtime)
    _audit(api, runtime)
    _notify(api, runtime)


#: Seconds a database check answers /health probes before the next one runs.
HEALTH_CHECK_TTL = 1.0


class DatabaseProbe:
    """The database check behind /health, run at most once per :data:`HEALTH_CHECK_TTL`.

    Load balancers probe often; a query per probe made every probe wait for the database (and,
    with many worker threads, for the GIL), which cost a third of the endpoint's throughput.
    A failure is still seen within a second.
    """

    def __init__(self, runtime: Any, ttl: float = HEALTH_CHECK_TTL):
        self.runtime = runtime
        self.ttl = ttl
        self._lock = threading.Lock()
        self._checked_at = float("-inf")
        self._result: tuple[int | None, str | None] = (None, None)

    def __call__(self) -> tuple[int | None, str | None]:
        """``(schema_version, None)`` when healthy, ``(None, error)`` when not."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked_at >= self.ttl:
                self._result = self._check()
                self._checked_at = now
            return self._result

    def _check(self) -> tuple[int | None, str | None]:
        try:
            storage = self.runtime.storage
            storage.check()
            return storage.schema_version(), None
        except Exception as err:
            return None, str(err)


def _system(api: Api, runtime: Any) -> None:
    probe = DatabaseProbe(runtime)

    @api.route(
        "GET",
        "/health",
        summary="Liveness and database check",
        tag="system",
        response=m.Health,
        errors=(503,),
        public=True,
    )
    def health() -> m.Health:
        """Answers 200 when the process serves and the database answers (checked at most once
        a second); 503 otherwise."""
        version, error = probe()
        if error is not None:
            raise ApiError(503, "unhealthy", f"database check failed: {error}")
        return m.Health(status="ok", database="ok", schema_version=version)

    @api.route(
        "GET", "/info", summary="Version, plugins and providers", tag="system", response=m.Info
    )
    def info() -> m.Info:
        """Providers say whether their key variable is set; a key itself is never shown.
        `status` has what plugins report (the `oryxos_status` hook), e.g. each MCP server's
        state and why it failed."""
        from oryxos.status import collect_sections

        config = runtime.config
        providers = []
        for name, provider in config.providers.items():
            key = provider.api_key
            providers.append(
                m.ProviderOut(
                    name=name,
                    model=provider.model,
                    configured=key is None or key.is_set(),
                    default=name == config.default_provider,
                    key_variables=key.variables if key is not None else [],
                )
            )
        plugins = [
            m.PluginOut(name=p.name, distribution=p.distribution, version=p.version)
            for p in runtime.pm.plugin_infos()
        ]
        return m.Info(
            version=__version__,
            workspace=str(runtime.workspace.project_dir),
            plugins=plugins,
            broken_plugins=[str(b) for b in runtime.pm.report.broken],
            providers=providers,
            auth=config.server.api_token is not None,
            status=[m.StatusSectionOut(**s.as_dict()) for s in collect_sections(runtime)],
        )

    @api.route(
        "GET", "/memory", summary="Long-term memory entries", tag="system", response=m.MemoryOut
    )
    def memory() -> m.MemoryOut:
        """Every entry of the configured memory back-end (none when no memory plugin is loaded)."""
        return m.MemoryOut(**services.memory_entries(runtime))

    @api.route(
        "GET",
        "/tools",
        summary="Tools, optionally only an agent's",
        tag="system",
        query=m.ToolQuery,
        response=m.ToolList,
        errors=(404,),
    )
    def tools(query: m.ToolQuery) -> m.ToolList:
        """With ``agent``, only the tools that agent's AGENT.md grants (availability for REST)."""
        items, unknown = services.list_tools(runtime, query.agent)
        return m.ToolList(items=[m.ToolOut(**i) for i in items], unknown=unknown)


def _sessions(api: Api, runtime: Any) -> None:
    @api.route(
        "POST",
        "/sessions",
        summary="Create a session",
        tag="sessions",
        body=m.CreateSession,
        response=m.SessionOut,
        status=201,
        errors=(404,),
    )
    def create_session(body: m.CreateSession) -> m.SessionOut:
        """A new, empty session with an agent (404 if there is no such agent)."""
        record = services.create_session(runtime, body.agent, body.user, body.channel)
        return m.SessionOut(**services.session_detail(record))

    @api.route(
        "GET",
        "/sessions",
        summary="List sessions",
        tag="sessions",
        query=m.SessionQuery,
        response=m.SessionPage,
    )
    def list_sessions(query: m.SessionQuery) -> m.SessionPage:
        """Newest activity first; filter by agent and status."""
        page = runtime.storage.sessions.list(
            profile_name=query.agent,
            status=query.status,
            limit=query.limit,
            offset=query.offset,
        )
        return m.SessionPage(
            items=[m.SessionSummary(**services.session_summary(r)) for r in page.items],
            total=page.total,
            limit=page.limit,
            offset=page.offset,
        )

    @api.route(
        "GET",
        "/sessions/{session_id}",
        summary="A session and its history",
        tag="sessions",
        response=m.SessionOut,
        errors=(404,),
    )
    def get_session(session_id: str) -> m.SessionOut:
        """The whole history, tool calls and tool results included."""
        return m.SessionOut(**services.session_detail(services.get_session(runtime, session_id)))

    @api.route(
        "DELETE",
        "/sessions/{session_id}",
        summary="Archive a session",
        tag="sessions",
        status=204,
        errors=(404,),
    )
    def archive_session(session_id: str) -> None:
        """The session is kept (and readable) but takes no more messages."""
        services.archive_session(runtime, session_id)

    @api.route(
        "POST",
        "/sessions/{session_id}/messages",
        summary="Send a message (one turn)",
        tag="sessions",
        body=m.MessageIn,
        response=m.TurnOut,
        errors=(404, 409, 502, 503, 504),
    )
    def send_message(session_id: str, body: m.MessageIn) -> m.TurnOut:
        """Runs the ReAct loop: the answer, the tool calls made and the token usage."""
        return m.TurnOut(**services.send_message(runtime, session_id, body.message))

    @api.route(
        "POST",
        "/sessions/{session_id}/messages/stream",
        summary="Send a message, streamed",
        tag="sessions",
        body=m.MessageIn,
        errors=(404, 409, 503),
        stream=True,
    )
    def stream_message(session_id: str, body: m.MessageIn) -> Any:
        """The same turn as `POST /sessions/{session_id}/messages`, reported as it runs, as
        Server-Sent Events (`text/event-stream`). Each event is `event: <name>` and one `data:`
        line of JSON:

        - `thinking` `{"iteration"}` — a model call begins;
        - `text` `{"delta", "iteration"}` — a piece of the model's reply as it arrives;
        - `text_discarded` `{"iteration"}` — the text of this model call so far is void (a retry
          follows);
        - `tool_call` `{"name", "arguments"}` and `tool_result` `{"name", "success", "result",
          "error_message"}`;
        - last, exactly one of `done` (the body the non-streaming request answers) or `error`
          (`{"status", "error": {"code", "message", "details"}}`, e.g. status 502 when the
          provider failed).

        Lines starting with `:` are keep-alive comments. An unknown or archived session and an
        unconfigured provider are refused before the stream starts (404, 409, 503 as JSON). A
        client that disconnects cancels the turn at its next step; what it did is kept.
        """
        return services.stream_message(runtime, session_id, body.message)


def _agents(api: Api, runtime: Any) -> None:
    @api.route(
        "POST",
        "/agents/{name}/invoke",
        summary="Stateless one-shot turn",
        tag="agents",
        body=m.MessageIn,
        response=m.TurnOut,
        errors=(404, 502, 503, 504),
    )
    def invoke_agent(name: str, body: m.MessageIn) -> m.TurnOut:
        """One turn without a stored session."""
        return m.TurnOut(**services.invoke_agent(runtime, name, body.message))

    @api.route(
        "POST",
        "/agents/{name}/invoke/stream",
        summary="Stateless one-shot turn, streamed",
        tag="agents",
        body=m.MessageIn,
        errors=(404, 503),
        stream=True,
    )
    def stream_invoke(name: str, body: m.MessageIn) -> Any:
        """The same turn as `POST /agents/{name}/invoke`, reported as it runs: the events of
        `POST /sessions/{session_id}/messages/stream`, the last one `done` with the body the
        non-streaming request answers (`session_id` null) or `error`."""
        return services.stream_invoke(runtime, name, body.message)

    @api.route(
        "GET", "/profiles", summary="List agent profiles", tag="agents", response=m.ProfileList
    )
    def list_profiles() -> m.ProfileList:
        """Valid profiles, and one message per invalid AGENT.md."""
        profiles, problems = services.list_profiles(runtime)
        return m.ProfileList(
            items=[m.ProfileSummary(**services.profile_summary(p)) for p in profiles],
            problems=problems,
        )

    @api.route(
        "GET",
        "/profiles/{name}",
        summary="One agent profile",
        tag="agents",
        response=m.ProfileDetail,
        errors=(404, 422),
    )
    def get_profile(name: str) -> m.ProfileDetail:
        """Identity, provider, tools, skills with their link state, and instructions."""
        return m.ProfileDetail(**services.profile_detail(services.load_profile(runtime, name)))


def _sandbox(api: Api, runtime: Any) -> None:
    @api.route(
        "GET",
        "/sandbox/whitelist",
        summary="Sandbox whitelist",
        tag="sandbox",
        query=m.WhitelistQuery,
        response=m.WhitelistList,
    )
    def list_whitelist(query: m.WhitelistQuery) -> m.WhitelistList:
        """Runtime entries (editable) and config.yaml entries (read-only)."""
        return m.WhitelistList(**services.whitelist(runtime, query.kind))

    @api.route(
        "POST",
        "/sandbox/whitelist",
        summary="Add a whitelist entry",
        tag="sandbox",
        body=m.WhitelistIn,
        response=m.WhitelistEntryOut,
        status=201,
        errors=(409,),
    )
    def add_whitelist(body: m.WhitelistIn) -> m.WhitelistEntryOut:
        """Effective at once, without a restart."""
        entry = services.add_whitelist(runtime, body.kind, body.value, body.note)
        return m.WhitelistEntryOut(**entry.as_dict())

    @api.route(
        "DELETE",
        "/sandbox/whitelist",
        summary="Remove a whitelist entry",
        tag="sandbox",
        query=m.WhitelistDeleteQuery,
        status=204,
        errors=(404,),
    )
    def remove_whitelist(query: m.WhitelistDeleteQuery) -> None:
        """Identified by ``kind`` and ``value`` in the query string; effective at once."""
        services.remove_whitelist(runtime, query.kind, query.value)


def _audit_query(query: m.AuditFilter, **extra: Any) -> AuditQuery:
    return AuditQuery(
        session_id=query.session_id,
        agent=query.agent,
        success=query.success,
        since=query.since,
        until=query.until,
        limit=query.limit,
        offset=query.offset,
        **extra,
    )


def _audit(api: Api, runtime: Any) -> None:
    @api.route(
        "GET",
        "/audit/tool-invocations",
        summary="Tool call audit",
        tag="audit",
        query=m.ToolAuditFilter,
        response=m.ToolInvocationPage,
    )
    def audit_tool_invocations(query: m.ToolAuditFilter) -> m.ToolInvocationPage:
        """Newest first; refused and failed calls included."""
        page = runtime.storage.audit.tool_invocations(_audit_query(query, tool_name=query.tool))
        return m.ToolInvocationPage(
            items=[m.ToolInvocationOut(**r.as_dict()) for r in page.items],
            total=page.total,
            limit=page.limit,
            offset=page.offset,
        )

    @api.route(
        "GET",
        "/audit/llm-calls",
        summary="Model call audit",
        tag="audit",
        query=m.LlmAuditFilter,
        response=m.LlmCallPage,
    )
    def audit_llm_calls(query: m.LlmAuditFilter) -> m.LlmCallPage:
        """Newest first; failed and retried attempts included."""
        page = runtime.storage.audit.llm_calls(_audit_query(query, provider=query.provider))
        return m.LlmCallPage(
            items=[m.LlmCallOut(**r.as_dict()) for r in page.items],
            total=page.total,
            limit=page.limit,
            offset=page.offset,
        )


def _channel_out(runtime: Any, record: Any) -> m.NotifyChannelOut:
    return m.NotifyChannelOut(**services.channel_public(runtime, record))


def _notify(api: Api, runtime: Any) -> None:
    @api.route(
        "GET",
        "/notify-channels",
        summary="List notify channels",
        tag="notify",
        response=m.NotifyChannelList,
    )
    def list_channels() -> m.NotifyChannelList:
        """Secrets are never shown; ``types`` lists the registered adapter types."""
        return m.NotifyChannelList(
            items=[_channel_out(runtime, r) for r in runtime.storage.notify_channels.list()],
            types=services.notify_types(runtime),
        )

    @api.route(
        "POST",
        "/notify-channels",
        summary="Create a notify channel",
        tag="notify",
        body=m.NotifyChannelIn,
        response=m.NotifyChannelOut,
        status=201,
        errors=(409,),
    )
    def create_channel(body: m.NotifyChannelIn) -> m.NotifyChannelOut:
        """``type`` must be a registered adapter type."""
        return _channel_out(runtime, services.create_channel(runtime, body.model_dump()))

    @api.route(
        "GET",
        "/notify-channels/{name}",
        summary="One notify channel",
        tag="notify",
        response=m.NotifyChannelOut,
        errors=(404,),
    )
    def get_channel(name: str) -> m.NotifyChannelOut:
        """Without its secret."""
        return _channel_out(runtime, services.get_channel(runtime, name))

    @api.route(
        "PUT",
        "/notify-channels/{name}",
        summary="Change a notify channel",
        tag="notify",
        body=m.NotifyChannelUpdate,
        response=m.NotifyChannelOut,
        errors=(404,),
    )
    def update_channel(name: str, body: m.NotifyChannelUpdate) -> m.NotifyChannelOut:
        """Only the fields given change."""
        changes = {
            key: value
            for key, value in body.model_dump(exclude_unset=True).items()
            if value is not None or key in ("secret", "description")  # null clears these
        }
        return _channel_out(runtime, services.update_channel(runtime, name, changes))

    @api.route(
        "DELETE",
        "/notify-channels/{name}",
        summary="Delete a notify channel",
        tag="notify",
        status=204,
        errors=(404,),
    )
    def delete_channel(name: str) -> None:
        """Gone at once."""
        services.delete_channel(runtime, name)

    @api.route(
        "POST",
        "/notify-channels/{name}/test",
        summary="Send a test message",
        tag="notify",
        body=m.NotifyTestIn,
        response=m.NotifyTestOut,
        errors=(404,),
    )
    def test_channel(name: str, body: m.NotifyTestIn) -> m.NotifyTestOut:
        """Delivers ``content`` through the channel's adapter and reports the outcome."""
        return m.NotifyTestOut(**services.send_test(runtime, name, body.content))
