"""Profiles and per-agent tools over the API, on the workspace's real agent directories."""

from __future__ import annotations

import os

from oryxos.testing import inline_plugin


def _skill(ws, name):
    folder = ws.skills_dir / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: About {name}.\n---\nBody\n")


def _agent(ws, name, tools="[shout, nothing_such]"):
    folder = ws.agents_dir / name
    (folder / "skills").mkdir(parents=True)
    (folder / "AGENT.md").write_text(
        f"---\nname: {name}\ndescription: The {name} agent.\nidentity: {{agent_name: Bob}}\n"
        f"provider: {{name: local, model: m1}}\ntools: {tools}\n---\nBe brief.\n"
    )
    return folder


def test_profiles_list_and_detail_with_skill_link_states(oryxos_workspace, client, api_error):
    ws = oryxos_workspace
    _skill(ws, "weather")
    bot = _agent(ws, "bot")
    os.symlink("../../../skills/weather", bot / "skills" / "weather")
    os.symlink("../../../skills/gone", bot / "skills" / "gone")
    broken = ws.agents_dir / "broken"
    broken.mkdir()
    (broken / "AGENT.md").write_text("---\nname: broken\nsettings: {max_iterations: 0}\n---\n")

    listed = client.get("/api/v1/profiles").get_json()
    names = [p["name"] for p in listed["items"]]
    assert "bot" in names and "default" in names and "broken" not in names
    assert any(
        "broken" in problem and "max_iterations" in problem for problem in listed["problems"]
    )

    detail = client.get("/api/v1/profiles/bot").get_json()
    assert detail["agent_name"] == "Bob" and detail["provider"] == "local"
    assert detail["instructions"].strip() == "Be brief."
    assert detail["settings"]["max_iterations"] == 10
    states = {s["name"]: s["state"] for s in detail["skills"]}
    assert states == {"weather": "ok", "gone": "dangling"}
    api_error(client.get("/api/v1/profiles/nobody"), 404, "not_found")
    api_error(client.get("/api/v1/profiles/..%2Fetc"), 404)


def test_tools_of_one_agent(oryxos_workspace, make_runtime, api_error):
    from oryxos_web import create_app

    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    def whisper(text: str) -> str:
        """Lower-case the text."""
        return text.lower()

    _agent(oryxos_workspace, "bot")
    runtime = make_runtime(
        inline_plugin(
            "loud",
            oryxos_register_tools=lambda catalog: [
                catalog.register(shout),
                catalog.register(whisper),
            ],
        )
    )
    client = create_app(runtime).test_client()
    body = client.get("/api/v1/tools?agent=bot").get_json()
    assert [t["name"] for t in body["items"]] == ["shout"]
    assert body["unknown"] == ["nothing_such"]
    all_names = {t["name"] for t in client.get("/api/v1/tools").get_json()["items"]}
    assert {"shout", "whisper"} <= all_names
    api_error(client.get("/api/v1/tools?agent=nobody"), 404)
    api_error(client.get("/api/v1/tools?agent=../x"), 422)


def test_create_session_needs_an_existing_agent(client, api_error):
    created = client.post("/api/v1/sessions", json={"agent": "default", "user": "ann"})
    assert created.status_code == 201
    session = created.get_json()
    assert (session["agent"], session["user"], session["channel"]) == ("default", "ann", "rest")
    assert session["status"] == "active" and session["messages"] == []
    assert client.get(f"/api/v1/sessions/{session['session_id']}").status_code == 200
    api_error(client.post("/api/v1/sessions", json={"agent": "nobody"}), 404)
    api_error(client.post("/api/v1/sessions", json={"agent": "a b"}), 422)
    api_error(client.post("/api/v1/agents/nobody/invoke", json={"message": "hi"}), 404)


def test_console_agent_pages(oryxos_workspace, client):
    _skill(oryxos_workspace, "weather")
    bot = _agent(oryxos_workspace, "bot")
    os.symlink("../../../skills/gone", bot / "skills" / "gone")
    html = client.get("/agents").get_data(as_text=True)
    assert "/agents/bot" in html
    html = client.get("/agents/bot").get_data(as_text=True)
    assert "dangling" in html and "Be brief." in html and "nothing_such" in html
    assert client.get("/agents/nobody").status_code == 404
