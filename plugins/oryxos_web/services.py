"""What the API and the console do, once: each function takes the runtime and plain values.

The REST routes (:mod:`oryxos_web.routes`) and the console pages (:mod:`oryxos_web.console`)
both call these, so a page and its endpoint cannot behave differently.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from oryxos.errors import ConflictError, NotFoundError, UsageError

if TYPE_CHECKING:
    from oryxos.agents import Profile

# Profiles ------------------------------------------------------------------------------------


def list_profiles(runtime: Any) -> tuple[list[Any], list[str]]:
    """Every valid agent profile, and the problems of the invalid ones."""
    profiles, problems = runtime.agents.list()
    return list(profiles), [str(p) for p in problems]


def load_profile(runtime: Any, name: str) -> Profile:
    """One profile; NotFoundError (404) if there is no such agent."""
    return runtime.agents.load(name)


def profile_summary(profile: Profile) -> dict[str, Any]:
    return {
        "name": profile.name,
        "description": profile.description,
        "provider": profile.provider.name,
        "model": profile.provider.model,
    }


def skill_states(profile: Profile) -> list[dict[str, Any]]:
    """Each skill binding with its link state (ok, dangling, escaped, ...)."""
    return [
        {"name": b.name, "state": b.state.value, "detail": b.message or None}
        for b in profile.skills
    ]


def profile_detail(profile: Profile) -> dict[str, Any]:
    return {
        **profile_summary(profile),
        "agent_name": profile.identity.agent_name,
        "tools": list(profile.tools),
        "mcp_servers": list(profile.mcp_servers),
        "channels": [c.name for c in profile.channels],
        "skills": skill_states(profile),
        "settings": profile.settings.model_dump(mode="json"),
        "instructions": profile.instructions,
    }


# Tools ----------------------------------------------------------------------------------------


def list_tools(runtime: Any, agent: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Every tool of the catalog (or only the agent's), with availability for a REST caller."""
    catalog = runtime.catalog
    ctx = catalog.context(
        agent=agent, channel="rest", interactive=False, config=runtime.config, runtime=runtime
    )
    unknown: list[str] = []
    if agent is None:
        entries = catalog.entries()
    else:
        profile = load_profile(runtime, agent)
        selection = catalog.select(profile.wanted_tools(), ctx)
        unknown = list(selection.unknown)
        chosen = set(selection.names) | set(selection.unavailable)
        entries = [e for e in catalog.entries() if e.name in chosen]
    items = []
    for entry in entries:
        ok, reason = entry.availability(ctx)
        items.append(
            {
                "name": entry.name,
                "description": entry.description,
                "groups": sorted(entry.groups),
                "plugin": entry.plugin,
                "available": ok,
                "reason": reason or None,
            }
        )
    return items, unknown


# Memory ---------------------------------------------------------------------------------------


def memory_entries(runtime: Any) -> dict[str, Any]:
    memory = runtime.memory
    if memory is None:
        return {"backend": None, "entries": []}
    return {
        "backend": runtime.config.memory.backend,
        "entries": [{"saved_at": e.saved_at, "text": e.text} for e in memory.entries()],
    }


# Sessions --------------------------------------------------------------------------------------


def session_summary(record: Any) -> dict[str, Any]:
    return {
        "session_id": record.session_id,
        "agent": record.profile_name,
        "channel": record.channel,
        "user": record.user_id,
        "status": record.status,
        "created_at": record.created_at,
        "last_active_at": record.last_active_at,
        "archived_at": record.archived_at,
        "message_count": len(record.messages),
    }


def session_detail(record: Any) -> dict[str, Any]:
    return {**session_summary(record), "messages": record.messages}


def create_session(runtime: Any, agent: str, user: str, channel: str) -> Any:
    """A new, empty, stored session with an existing agent.

    The id comes from the kernel's session manager (``channel:user:agent``, plus a random
    suffix when that is taken), so the CLI and the API name sessions alike.
    """
    load_profile(runtime, agent)  # 404 for an unknown agent
    record = runtime.sessions.new(agent, channel=channel, user=user)
    runtime.storage.sessions.save(record)
    return record


def get_session(runtime: Any, session_id: str) -> Any:
    record = runtime.storage.sessions.get(session_id)
    if record is None:
        raise NotFoundError(f"no session {session_id!r}")
    return record


def archive_session(runtime: Any, session_id: str) -> None:
    if not runtime.storage.sessions.archive(session_id):
        raise NotFoundError(f"no session {session_id!r}")


def send_message(runtime: Any, session_id: str, message: str) -> dict[str, Any]:
    """Run one turn of the ReAct loop in a session (409 if it is archived)."""
    from oryxos_web.turns import run_session_turn

    return run_session_turn(runtime, _active_session(runtime, session_id), message)


def stream_message(runtime: Any, session_id: str, message: str) -> Iterator[str]:
    """:func:`send_message` as Server-Sent Events (see ``turns.stream_session_turn``).

    Everything that can be refused is refused before the stream starts, with the status a
    non-streaming request would get: 404, 409, 503 for a provider that is not configured.
    """
    from oryxos_web.turns import stream_session_turn

    return stream_session_turn(runtime, _active_session(runtime, session_id), message)


def _active_session(runtime: Any, session_id: str) -> Any:
    """The session, which must take messages (404 unknown, 409 archived)."""
    record = get_session(runtime, session_id)
    if record.status != "active":
        raise ConflictError(f"session {session_id!r} is {record.status}; create a new session")
    return record


def invoke_agent(runtime: Any, agent: str, message: str) -> dict[str, Any]:
    """A stateless one-shot turn: no session is stored."""
    from oryxos_web.turns import run_oneshot_turn

    profile = load_profile(runtime, agent)
    return run_oneshot_turn(runtime, profile, message)


def stream_invoke(runtime: Any, agent: str, message: str) -> Iterator[str]:
    """:func:`invoke_agent` as Server-Sent Events (404 and 503 before the stream starts)."""
    from oryxos_web.turns import stream_oneshot_turn

    return stream_oneshot_turn(runtime, load_profile(runtime, agent), message)


# Sandbox whitelist -------------------------------------------------------------------------------


def whitelist(runtime: Any, kind: str | None = None) -> dict[str, Any]:
    sandbox = runtime.config.sandbox
    return {
        "items": [e.as_dict() for e in runtime.storage.whitelist.list(kind)],
        "config": {
            "file": list(sandbox.file.allowed_paths),
            "shell": list(sandbox.shell.allowed_commands),
            "http": list(sandbox.http.allowed_domains),
        },
    }


def add_whitelist(runtime: Any, kind: str, value: str, note: str | None) -> Any:
    value = value.strip()
    if not value:
        raise UsageError("value: must not be blank")
    return runtime.storage.whitelist.add(kind, value, note)


def remove_whitelist(runtime: Any, kind: str, value: str) -> None:
    if not runtime.storage.whitelist.remove(kind, value):
        raise NotFoundError(f"no {kind} whitelist entry {value!r}")


# Notify channels ----------------------------------------------------------------------------------
#
# The kernel's notify service (``runtime.notify``) owns validation, secrets and delivery; the
# API and the console only call it. Without it (an older kernel) the store is used directly.


def _service(runtime: Any) -> Any:
    return getattr(runtime, "notify", None)


def notify_types(runtime: Any) -> list[str]:
    return sorted(runtime.notify_adapters.names())


def channel_public(runtime: Any, record: Any) -> dict[str, Any]:
    """A channel as shown: never the secret, at most the variable it is read from."""
    out = record.public_dict()
    service = _service(runtime)
    shown = service.describe(record).get("secret") if service is not None else None
    out["secret_variable"] = shown if isinstance(shown, str) and shown.startswith("${") else None
    return out


def _check_type(runtime: Any, type_name: str) -> None:
    types = notify_types(runtime)
    if type_name not in types:
        known = ", ".join(types) or "none (is the notify plugin disabled?)"
        raise UsageError(f"type: unknown notify channel type {type_name!r} (known: {known})")


def get_channel(runtime: Any, name: str) -> Any:
    service = _service(runtime)
    if service is not None:
        return service.get(name)
    record = runtime.storage.notify_channels.get(name)
    if record is None:
        raise NotFoundError(f"no notify channel {name!r}")
    return record


def create_channel(runtime: Any, data: dict[str, Any]) -> Any:
    from oryxos.storage import NotifyChannelRecord

    service = _service(runtime)
    if service is not None:
        return service.add(
            data["name"],
            data["type"],
            data["url"],
            secret=data.get("secret"),
            description=data.get("description"),
        )
    _check_type(runtime, data["type"])
    return runtime.storage.notify_channels.create(NotifyChannelRecord(**data))


def update_channel(runtime: Any, name: str, changes: dict[str, Any]) -> Any:
    """Change the fields given (``secret``/``description`` set to None clear them)."""
    service = _service(runtime)
    if service is not None:
        return service.update(name, **changes)
    if changes.get("type") is not None:
        _check_type(runtime, changes["type"])
    get_channel(runtime, name)
    if not changes:
        raise UsageError(f"nothing to change for notify channel {name!r}")
    return runtime.storage.notify_channels.update(name, **changes)


def delete_channel(runtime: Any, name: str) -> None:
    service = _service(runtime)
    if service is not None:
        service.remove(name)
    elif not runtime.storage.notify_channels.delete(name):
        raise NotFoundError(f"no notify channel {name!r}")


def send_test(runtime: Any, name: str, content: str) -> dict[str, Any]:
    """Send a test message through the channel's adapter and report the vendor's verdict."""
    service = _service(runtime)
    if service is not None:
        delivery = service.send(name, content)
    else:
        record = get_channel(runtime, name)
        adapter = runtime.notify_adapters.get(record.type)
        delivery = adapter.deliver(record, content, secret=record.secret, timeout=10.0)
    return {
        "channel": name,
        "delivered": bool(delivery.ok),
        "detail": getattr(delivery, "detail", None) or None,
    }
