"""The web console: server-rendered pages (Jinja templates shipped with this package).

Pages call the same functions as the API (:mod:`oryxos_web.services`). With a token configured
a login form sets a signed, HTTP-only, SameSite=Strict session cookie; every form carries a
CSRF token checked on POST. No page fetches anything from the internet.
"""

from __future__ import annotations

import secrets
from typing import Any

from oryxos.errors import OryxError
from oryxos.storage import AuditQuery
from oryxos_web import auth, services
from oryxos_web.errors import ApiError, from_oryx_error

PAGE_SIZE = 25


def console_error_page(err: ApiError) -> Any:
    from flask import render_template

    return render_template("error.html", error=err), err.status


def _csrf_token() -> str:
    from flask import session

    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return session["csrf"]


def _next_page() -> str:
    """Where to go after logging in: this page, or for a form posted after the login expired
    a page to open again (an action's address cannot be opened with GET): the conversation
    for a chat message, else the dashboard."""
    from flask import request, url_for

    if request.method == "GET":
        return request.full_path.rstrip("?")
    if request.endpoint in ("console.chat", "console.chat_stream"):
        session_id = request.form.get("session_id")
        values = {"session": session_id} if session_id else {}
        return url_for("console.chat", **values)
    return url_for("console.dashboard")


def console_blueprint(runtime: Any, token: str | None) -> Any:
    from flask import (
        Blueprint,
        flash,
        redirect,
        render_template,
        request,
        session,
        url_for,
    )

    bp = Blueprint("console", __name__)

    @bp.app_context_processor
    def globals_() -> dict[str, Any]:
        return {
            "csrf_token": _csrf_token,
            "auth_enabled": token is not None,
            "logged_in": session.get("auth") is True,
        }

    @bp.before_request
    def guard() -> Any:
        # Not logged in: to the login page first (a form posted after the login expired
        # carries a stale CSRF token too; redirecting changes nothing, so it is safe).
        if (
            token is not None
            and request.endpoint != "console.login"
            and session.get("auth") is not True
        ):
            return redirect(url_for("console.login", next=_next_page()))
        if request.method == "POST":
            given = request.form.get("csrf_token", "")
            if not auth.token_matches(session.get("csrf", "") or "\0", given):
                raise ApiError(400, "csrf_failed", "the form expired or did not come from here")
        return None

    def back(endpoint: str, **values: Any) -> Any:
        return redirect(url_for(endpoint, **values))

    def attempt(fn: Any, *args: Any, ok: str | None = None) -> Any:
        """Run an action; a user-facing error becomes a flash message instead of a page."""
        try:
            result = fn(*args)
        except OryxError as err:
            flash(str(from_oryx_error(err).message), "error")
            return None
        except ApiError as err:
            flash(err.message, "error")
            return None
        if ok:
            flash(ok, "ok")
        return result if result is not None else True

    # Login ------------------------------------------------------------------------------

    @bp.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        if token is None:
            return back("console.dashboard")
        if request.method == "POST":
            if auth.token_matches(token, request.form.get("token", "")):
                session.clear()
                session["auth"] = True
                _csrf_token()
                target = request.args.get("next", "")
                if not target.startswith("/") or target.startswith("//"):
                    target = url_for("console.dashboard")
                return redirect(target)
            flash("wrong token", "error")
        return render_template("login.html")

    @bp.route("/logout", methods=["POST"])
    def logout() -> Any:
        session.clear()
        return back("console.login" if token else "console.dashboard")

    # Pages ------------------------------------------------------------------------------

    @bp.route("/")
    def dashboard() -> Any:
        health: dict[str, Any] = {"ok": True, "detail": ""}
        counts: dict[str, int] = {}
        try:
            runtime.storage.check()
            counts = runtime.storage.counts()
        except Exception as err:
            health = {"ok": False, "detail": str(err)}
        try:
            profiles, problems = services.list_profiles(runtime)
        except (OryxError, ApiError) as err:
            profiles, problems = [], [str(err)]
        from oryxos.status import collect_sections

        return render_template(
            "dashboard.html",
            sections=collect_sections(runtime),
            health=health,
            counts=counts,
            agents=len(profiles),
            problems=problems,
            tools=len(runtime.catalog.entries()),
        )

    @bp.route("/agents")
    def agents() -> Any:
        try:
            profiles, problems = services.list_profiles(runtime)
        except (OryxError, ApiError) as err:
            profiles, problems = [], [str(err)]
        return render_template(
            "agents.html",
            profiles=[services.profile_summary(p) for p in profiles],
            problems=problems,
        )

    @bp.route("/agents/<name>")
    def agent(name: str) -> Any:
        profile = services.load_profile(runtime, name)
        tools, unknown = services.list_tools(runtime, name)
        return render_template(
            "agent.html", p=services.profile_detail(profile), tools=tools, unknown=unknown
        )

    @bp.route("/sessions")
    def sessions() -> Any:
        page_no = max(request.args.get("page", 1, type=int), 1)
        agent_name = request.args.get("agent") or None
        status = request.args.get("status") or None
        if status not in (None, "active", "archived"):
            status = None
        page = runtime.storage.sessions.list(
            profile_name=agent_name,
            status=status,
            limit=PAGE_SIZE,
            offset=(page_no - 1) * PAGE_SIZE,
        )
        return render_template(
            "sessions.html",
            items=[services.session_summary(r) for r in page.items],
            total=page.total,
            page=page_no,
            pages=max((page.total + PAGE_SIZE - 1) // PAGE_SIZE, 1),
            agent=agent_name or "",
            status=status or "",
        )

    @bp.route("/sessions/<session_id>")
    def session_page(session_id: str) -> Any:
        record = services.get_session(runtime, session_id)
        return render_template("session.html", s=services.session_detail(record))

    @bp.route("/sessions/<session_id>/archive", methods=["POST"])
    def archive(session_id: str) -> Any:
        attempt(services.archive_session, runtime, session_id, ok="session archived")
        return back("console.session_page", session_id=session_id)

    @bp.route("/chat", methods=["GET", "POST"])
    def chat() -> Any:
        if request.method == "POST":
            agent_name = request.form.get("agent", "default")
            session_id = request.form.get("session_id") or None
            message = request.form.get("message", "").strip()
            if not message:
                flash("type a message first", "error")
            else:
                if session_id is None:
                    record = attempt(
                        services.create_session, runtime, agent_name, "console", "console"
                    )
                    session_id = record.session_id if record else None
                if session_id:
                    attempt(services.send_message, runtime, session_id, message)
            values = {"session": session_id} if session_id else {"agent": agent_name}
            return back("console.chat", **values)
        session_id = request.args.get("session")
        record = services.get_session(runtime, session_id) if session_id else None
        try:
            profiles, _ = services.list_profiles(runtime)
        except (OryxError, ApiError):
            profiles = []
        return render_template(
            "chat.html",
            s=services.session_detail(record) if record else None,
            agents=[p.name for p in profiles],
            agent=record.profile_name if record else request.args.get("agent", "default"),
        )

    @bp.route("/chat/stream", methods=["POST"])
    def chat_stream() -> Any:
        """The chat form's turn as Server-Sent Events, for console.js (the form works without).

        First a ``session`` event (``session_id``, ``url``: the conversation's page), then the
        API's events (``POST /sessions/{id}/messages/stream``). What is refused before the turn
        starts is flashed, and the answer is JSON ``{"redirect": url}`` for the page to go to.
        """
        from flask import jsonify

        from oryxos_web.turns import event_stream_response, sse

        agent_name = request.form.get("agent", "default")
        session_id = request.form.get("session_id") or None
        message = request.form.get("message", "").strip()
        values = {"session": session_id} if session_id else {"agent": agent_name}
        try:
            if not message:
                raise ApiError(422, "validation_failed", "type a message first")
            if session_id is None:
                record = services.create_session(runtime, agent_name, "console", "console")
                session_id = record.session_id
                values = {"session": session_id}
            events = services.stream_message(runtime, session_id, message)
        except (OryxError, ApiError) as err:
            api_err = from_oryx_error(err) if isinstance(err, OryxError) else err
            flash(api_err.message, "error")
            return jsonify(redirect=url_for("console.chat", **values)), api_err.status
        url = url_for("console.chat", session=session_id)

        def stream() -> Any:
            yield sse("session", {"session_id": session_id, "url": url})
            yield from events

        return event_stream_response(stream())

    @bp.route("/tools")
    def tools() -> Any:
        items, _ = services.list_tools(runtime)
        return render_template("tools.html", items=items)

    @bp.route("/notify", methods=["GET", "POST"])
    def notify() -> Any:
        if request.method == "POST":
            data = {
                key: (request.form.get(key) or "").strip() or None
                for key in ("name", "type", "url", "secret", "description")
            }
            attempt(_create_channel, runtime, data, ok=f"channel {data['name']} created")
            return back("console.notify")
        return render_template(
            "notify.html",
            items=[
                services.channel_public(runtime, r) for r in runtime.storage.notify_channels.list()
            ],
            types=services.notify_types(runtime),
        )

    @bp.route("/notify/<name>/edit", methods=["POST"])
    def notify_edit(name: str) -> Any:
        changes = {
            key: request.form.get(key, "").strip()
            for key in ("type", "url", "description")
            if request.form.get(key, "").strip()
        }
        if request.form.get("secret"):
            changes["secret"] = request.form["secret"]
        attempt(_update_channel, runtime, name, changes, ok=f"channel {name} saved")
        return back("console.notify")

    @bp.route("/notify/<name>/delete", methods=["POST"])
    def notify_delete(name: str) -> Any:
        attempt(services.delete_channel, runtime, name, ok=f"channel {name} deleted")
        return back("console.notify")

    @bp.route("/notify/<name>/test", methods=["POST"])
    def notify_test(name: str) -> Any:
        result = attempt(services.send_test, runtime, name, "OryxOS console test message")
        if isinstance(result, dict):
            if result["delivered"]:
                flash(f"test message delivered to {name}", "ok")
            else:
                flash(f"test message to {name} failed: {result['detail']}", "error")
        return back("console.notify")

    @bp.route("/sandbox", methods=["GET", "POST"])
    def sandbox() -> Any:
        if request.method == "POST":
            kind = request.form.get("kind", "")
            value = request.form.get("value", "")
            note = request.form.get("note") or None
            if kind not in ("file", "shell", "http"):
                flash("kind: expected file, shell or http", "error")
            else:
                attempt(services.add_whitelist, runtime, kind, value, note, ok="entry added")
            return back("console.sandbox")
        return render_template("sandbox.html", w=services.whitelist(runtime))

    @bp.route("/sandbox/delete", methods=["POST"])
    def sandbox_delete() -> Any:
        kind, value = request.form.get("kind", ""), request.form.get("value", "")
        attempt(services.remove_whitelist, runtime, kind, value, ok="entry removed")
        return back("console.sandbox")

    @bp.route("/audit")
    def audit() -> Any:
        kind = "llm" if request.args.get("kind") == "llm" else "tools"
        page_no = max(request.args.get("page", 1, type=int), 1)
        success = {"true": True, "false": False}.get(request.args.get("success", ""))
        filters = {
            key: request.args.get(key, "").strip() or None
            for key in ("session_id", "agent", "tool")
        }
        query = AuditQuery(
            session_id=filters["session_id"],
            agent=filters["agent"],
            success=success,
            limit=PAGE_SIZE,
            offset=(page_no - 1) * PAGE_SIZE,
        )
        if kind == "llm":
            page = runtime.storage.audit.llm_calls(query)
        else:
            query.tool_name = filters["tool"]
            page = runtime.storage.audit.tool_invocations(query)
        return render_template(
            "audit.html",
            kind=kind,
            items=[r.as_dict() for r in page.items],
            total=page.total,
            page=page_no,
            pages=max((page.total + PAGE_SIZE - 1) // PAGE_SIZE, 1),
            filters={k: v or "" for k, v in filters.items()},
            success=request.args.get("success", ""),
        )

    return bp


def _create_channel(runtime: Any, data: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from oryxos_web.errors import from_validation_error
    from oryxos_web.models import NotifyChannelIn

    try:
        body = NotifyChannelIn.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as err:
        raise from_validation_error(err, "form") from None
    return services.create_channel(runtime, body.model_dump())


def _update_channel(runtime: Any, name: str, changes: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    from oryxos_web.errors import from_validation_error
    from oryxos_web.models import NotifyChannelUpdate

    try:
        body = NotifyChannelUpdate.model_validate(changes)
    except ValidationError as err:
        raise from_validation_error(err, "form") from None
    return services.update_channel(runtime, name, body.model_dump(exclude_unset=True))
