"""examples/memory/README.md, offline walk-through: every turn is a new process."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import free_port

pytestmark = pytest.mark.timeout(180)

PREFERENCE = "I'm vegetarian and I don't eat fish; I never have more than 30 minutes to cook."


def test_memory_offline_walkthrough(example) -> None:
    ex = example("memory")
    port = free_port()
    ex.env["ORYXOS_MODEL_PORT"] = str(port)
    # 1. the scripted model
    ex.start_model("offline/script.yaml", port, log="requests.jsonl")
    ex.env["ORYXOS_PROVIDER"] = "offline"
    chat = ("chat", "-p", "assistant", "--session")
    # 2. before: nothing is known (the memory is not in the prompt)
    before = ex.oryxos(*chat, "monday", "-m", "What should I cook tonight?")
    assert before.returncode == 0, before.stderr
    assert "I do not know your tastes yet" in before.stdout
    # 3. the preference is saved
    saved = ex.oryxos(*chat, "monday", "-m", PREFERENCE)
    assert saved.returncode == 0, saved.stderr
    assert "I will remember that" in saved.stdout
    shown = ex.oryxos("memory", "show")
    assert "The user is vegetarian and does not eat fish." in shown.stdout
    # 4. a restarted process continues the session: turn 1 and 2 are in its history
    again = ex.oryxos(*chat, "monday", "-m", "What did I just tell you?")
    assert again.returncode == 0, again.stderr
    assert "You told me you are vegetarian" in again.stdout
    show = ex.oryxos("session", "show", "monday", "--json")
    assert show.returncode == 0, show.stderr
    assert PREFERENCE in show.stdout and "What did I just tell you?" in show.stdout
    # 5. a new session in a new process answers from memory
    dinner = ex.oryxos(*chat, "tuesday", "-m", "What should I cook tonight?")
    assert dinner.returncode == 0, dinner.stderr
    assert "mushroom and spinach risotto" in dinner.stdout
    # What the model really received (the server's request log):
    requests = [json.loads(line) for line in (ex.dir / "requests.jsonl").read_text().splitlines()]
    texts = [json.dumps(r["messages"]) for r in requests]
    assert len(requests) == 5
    assert "The user is vegetarian" not in texts[0]  # before saving
    assert "Saved to memory" in texts[2]  # the tool result went back to the model
    assert any(m.get("content") == PREFERENCE for m in requests[3]["messages"])  # history
    tuesday = requests[4]["messages"]
    assert "The user is vegetarian" in tuesday[0]["content"]  # memory in the system prompt
    assert not any(m.get("content") == PREFERENCE for m in tuesday)  # not tuesday's history
    # 6. the audit rows, as the README prints them and as stored
    shown = ex.oryxos("audit", "tools")
    assert shown.returncode == 0 and "save_memory" in shown.stdout and "monday" in shown.stdout
    shown = ex.oryxos("audit", "llm")
    assert shown.returncode == 0 and shown.stdout.count("tuesday") == 1
    tools = ex.query("SELECT session_id, tool_name, success, input_json FROM tool_invocations")
    assert [(r[0], r[1], r[2]) for r in tools] == [("monday", "save_memory", 1)]
    assert "vegetarian" in json.loads(tools[0][3])["text"]
    llm = ex.query("SELECT session_id, COUNT(*) FROM llm_calls GROUP BY session_id ORDER BY 1")
    assert llm == [("monday", 4), ("tuesday", 1)]
