"""examples/multi-agent/README.md, offline: two agents, two scripted models, one oryxos serve."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.e2e.conftest import free_port

pytestmark = pytest.mark.timeout(240)


def test_multi_agent_offline_walkthrough(example) -> None:
    ex = example("multi-agent")
    support_port, ops_port, api_port = free_port(), free_port(), free_port()
    ex.env.update(SUPPORT_MODEL_PORT=str(support_port), OPS_MODEL_PORT=str(ops_port))
    # 1. the offline providers
    shutil.copy(ex.dir / "offline/config.yaml", ex.dir / ".oryxos/config.yaml")
    # 2. the two scripted models and the server
    ex.start_model(
        "offline/support-script.yaml",
        support_port,
        log="support-requests.jsonl",
        name="support-model",
    )
    ex.start_model("offline/ops-script.yaml", ops_port, log="ops-requests.jsonl", name="ops-model")
    serve = ex.serve(api_port)
    api = f"http://127.0.0.1:{api_port}/api/v1"
    with httpx.Client(base_url=api, timeout=60) as client:
        # 3. the agents and their tools
        names = {p["name"] for p in client.get("/profiles").json()["items"]}
        assert {"support", "ops"} <= names
        support_tools = {
            t["name"] for t in client.get("/tools", params={"agent": "support"}).json()["items"]
        }
        ops_tools = {
            t["name"] for t in client.get("/tools", params={"agent": "ops"}).json()["items"]
        }
        assert support_tools == {"grep", "read_file", "glob"}
        assert ops_tools == {"shell", "current_time"}

        # 4. both at once
        def invoke(agent: str, message: str) -> dict:
            reply = client.post(f"/agents/{agent}/invoke", json={"message": message})
            assert reply.status_code == 200, reply.text
            return reply.json()

        with ThreadPoolExecutor(2) as pool:
            refund = pool.submit(invoke, "support", "Can I get a refund for opened headphones?")
            disk = pool.submit(invoke, "ops", "How much disk space is left on /?")
            refund, disk = refund.result(), disk.result()
        assert refund["agent"] == "support" and "within 30 days of delivery" in refund["answer"]
        assert [c["name"] for c in refund["tool_calls"]] == ["grep"]
        assert disk["agent"] == "ops" and "df -h /" in disk["answer"]
        assert disk["tool_calls"][0]["arguments"] == {"command": "df -h /"}
        assert disk["tool_calls"][0]["success"] is True
        # 5. a conversation with each
        for agent, user, message, expected in [
            ("support", "ann", "What does shipping cost?", "ship free"),
            ("ops", "bob", "Check the disk please", "nothing needs attention"),
        ]:
            created = client.post("/sessions", json={"agent": agent, "user": user})
            assert created.status_code == 201, created.text
            sid = created.json()["session_id"]
            assert sid == f"rest:{user}:{agent}"
            turn = client.post(f"/sessions/{sid}/messages", json={"message": message})
            assert turn.status_code == 200 and expected in turn.json()["answer"], turn.text
        # 6. deny by default
        refused = invoke("ops", "Please delete the demo cache")
        assert refused["success"] is False
        call = refused["tool_calls"][0]
        assert call["success"] is False
        assert "sandbox.shell.allowed_commands" in json.dumps(call)
        # 7. the audit, per agent
        ops_rows = client.get("/audit/tool-invocations", params={"agent": "ops"}).json()["items"]
        assert sorted((r["tool_name"], r["success"]) for r in ops_rows) == [
            ("shell", False),
            ("shell", True),
            ("shell", True),
        ]
        support_llm = client.get("/audit/llm-calls", params={"agent": "support"}).json()
        assert {r["provider"] for r in support_llm["items"]} == {"support"}
        assert support_llm["total"] == 3  # refund: grep + answer; shipping: answer
    # each model got only its own agent's requests
    support_log = (ex.dir / "support-requests.jsonl").read_text().splitlines()
    ops_log = (ex.dir / "ops-requests.jsonl").read_text().splitlines()
    assert len(support_log) == 3 and len(ops_log) == 5
    assert all(json.loads(line)["model"] == "scripted-support" for line in support_log)
    assert all(json.loads(line)["model"] == "scripted-ops" for line in ops_log)
    # the same rows in the database
    rows = ex.query("SELECT agent, provider, COUNT(*) FROM llm_calls GROUP BY 1, 2 ORDER BY 1")
    assert rows == [("ops", "ops", 5), ("support", "support", 3)]
    # 8. SIGTERM stops the server cleanly
    ex.stop(serve)
    assert serve.returncode == 0, ex.output("serve")
