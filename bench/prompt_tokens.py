"""Fixed prompt tokens: what every request of a turn carries before any conversation.

An agent with 24 tools and 10 bound skills is built in a temporary workspace; the
PromptBuilder assembles its system prompt (identity, AGENT.md body, skill metadata, the
default bootstrap files) and tool schemas, and litellm's token counter counts them.
Target: at most 3,000 tokens.

Tools registered by installed plugins are used as they are; a tool that no plugin provides
yet is replaced by a synthetic one with a schema of realistic size (the same arguments the
built-in tool of that name takes, see reference/tools-and-sandbox.zh.md), and the output
says which.

    python bench/prompt_tokens.py [--model gpt-4o] [--json] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from oryxos.tools import FunctionTool, Tool

TARGET = 3000
P = Annotated[str, Field(description="file or directory path")]


# Synthetic stand-ins, with the arguments of the 24 built-in tools --------------------------


def read_file(
    path: P,
    offset: Annotated[int, Field(description="first line, 1-based")] = 1,
    limit: Annotated[int, Field(description="maximum lines")] = 2000,
) -> str:
    """Read a text file (part of it with offset/limit)."""
    return ""


def write_file(path: P, content: str) -> str:
    """Create or overwrite a file."""
    return ""


def edit_file(
    path: P,
    old_text: Annotated[str, Field(description="text that occurs exactly once")],
    new_text: str,
) -> str:
    """Replace one unique piece of a file."""
    return ""


def append_file(path: P, content: str) -> str:
    """Append text to a file."""
    return ""


def list_dir(path: P = ".") -> str:
    """List a directory."""
    return ""


def glob(pattern: Annotated[str, Field(description="e.g. **/*.py")], path: P = ".") -> str:
    """Find files by glob pattern."""
    return ""


def grep(
    pattern: Annotated[str, Field(description="regular expression")],
    path: P = ".",
    glob: Annotated[str | None, Field(description="only files matching this glob")] = None,
) -> str:
    """Search file contents with a regular expression."""
    return ""


def make_dir(path: P) -> str:
    """Create a directory (and its parents)."""
    return ""


def move_file(source: P, destination: P) -> str:
    """Move or rename a file."""
    return ""


def copy_file(source: P, destination: P) -> str:
    """Copy a file."""
    return ""


def delete_file(path: P) -> str:
    """Delete a file (never a directory)."""
    return ""


def shell(
    command: Annotated[str, Field(description="command line; every command must be allowed")],
    timeout: Annotated[int | None, Field(description="seconds")] = None,
) -> str:
    """Run a shell command."""
    return ""


def http_get(url: str, headers: dict[str, str] | None = None) -> str:
    """HTTP GET a URL."""
    return ""


def http_post(url: str, body: str, content_type: str = "application/json") -> str:
    """HTTP POST to a URL."""
    return ""


def http_request(
    method: Annotated[str, Field(description="GET, POST, PUT, PATCH or DELETE")],
    url: str,
    headers: dict[str, str] | None = None,
    body: str | None = None,
) -> str:
    """Any HTTP request."""
    return ""


def fetch_webpage(url: str, max_chars: int = 20000) -> str:
    """Fetch a web page as readable text."""
    return ""


def download_file(url: str, path: P) -> str:
    """Download a URL to a file."""
    return ""


def web_search(query: str, count: Annotated[int, Field(ge=1, le=20)] = 5) -> str:
    """Search the web."""
    return ""


def current_time(
    timezone: Annotated[str, Field(description="IANA name, e.g. Asia/Shanghai")] = "UTC",
) -> str:
    """The current date and time."""
    return ""


def json_extract(
    text: Annotated[str, Field(description="JSON text")],
    path: Annotated[str, Field(description="e.g. $.items[0].name")],
) -> str:
    """Extract a value from JSON."""
    return ""


def save_memory(text: Annotated[str, Field(description="one fact worth keeping")]) -> str:
    """Save a lasting fact to long-term memory."""
    return ""


def recall_memory(query: str, limit: int = 5) -> str:
    """Search long-term memory."""
    return ""


def notify(
    channel: Annotated[str, Field(description="a registered notify channel name")],
    content: str,
) -> str:
    """Send a message to a notify channel."""
    return ""


def ask_user(question: str) -> str:
    """Ask the user a question and wait for the answer."""
    return ""


SYNTHETIC = [
    read_file, write_file, edit_file, append_file, list_dir, glob, grep, make_dir, move_file,
    copy_file, delete_file, shell, http_get, http_post, http_request, fetch_webpage,
    download_file, web_search, current_time, json_extract, save_memory, recall_memory, notify,
    ask_user,
]  # fmt: skip

SKILLS = {
    "disk-triage": "Find what fills a disk and propose safe ways to free space.",
    "incident-report": "Write a short, blameless incident report after an outage.",
    "weather-report": "Get current weather and a 3-day forecast for a place from Open-Meteo.",
    "pr-digest": "Summarise this week's merged pull requests of a GitHub repository.",
    "log-triage": "Find the first error in a service's logs and explain the likely cause.",
    "cert-expiry": "Check TLS certificates of the team's hosts and list those expiring soon.",
    "db-backup-check": "Verify last night's database backups exist and are not empty.",
    "oncall-handover": "Write the on-call handover note from the last 24 hours of alerts.",
    "release-notes": "Draft release notes from a list of commits, grouped by kind of change.",
    "meeting-minutes": "Turn a meeting transcript into decisions, actions and owners.",
}

BODY = """Help the operators of this workspace's servers.

- Check before you act: look at disk, memory and load with the shell tool before proposing a fix.
- Never delete or move files yourself; list the commands for a person to run.
- When an incident is over, write the report the way the incident skill says.
"""


def build_workspace(root: Path) -> Any:
    """A workspace made by 'oryxos init' plus the bench agent and its 10 linked skills."""
    from oryxos.commands.init import create_workspace
    from oryxos.workspace import Workspace

    ws = Workspace(root / ".oryxos")
    create_workspace(ws.path)
    agent = ws.agents_dir / "bench"
    (agent / "skills").mkdir(parents=True)
    names = "".join(f"  - {fn.__name__}\n" for fn in SYNTHETIC)
    (agent / "AGENT.md").write_text(
        "---\nname: bench\ndescription: Operations helper.\nidentity:\n  agent_name: Ops\n"
        f"tools:\n{names}---\n\n{BODY}",
        encoding="utf-8",
    )
    for name, description in SKILLS.items():
        folder = ws.skills_dir / name
        folder.mkdir()
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n"
            + "A long body that is never sent with the prompt.\n" * 200,
            encoding="utf-8",
        )
        os.symlink(f"../../../skills/{name}", agent / "skills" / name)
    return ws


def resolve_tools(runtime: Any, profile: Any) -> tuple[list[Tool], list[str]]:
    """Real tools where a plugin provides them, synthetic ones otherwise."""
    catalog = runtime.catalog
    ctx = catalog.context(agent=profile.name, config=runtime.config, runtime=runtime)
    tools: list[Tool] = []
    synthetic: list[str] = []
    for fn in SYNTHETIC:
        if fn.__name__ in catalog:
            tools.append(catalog.build(fn.__name__, ctx))
        else:
            tools.append(FunctionTool(fn))
            synthetic.append(fn.__name__)
    return tools, synthetic


def measure(model: str) -> dict[str, Any]:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    import litellm

    from oryxos.prompt import PromptBuilder
    from oryxos.runtime import Runtime

    litellm.suppress_debug_info = True
    with tempfile.TemporaryDirectory() as tmp:
        ws = build_workspace(Path(tmp))
        runtime = Runtime.load(ws)
        try:
            profile = runtime.agents.load("bench")
            tools, synthetic = resolve_tools(runtime, profile)
            prompt = PromptBuilder(runtime).build(profile, [], tools)
        finally:
            runtime.close()
    system_tokens = litellm.token_counter(model=model, messages=prompt.messages)
    total = litellm.token_counter(model=model, messages=prompt.messages, tools=prompt.tools)
    return {
        "model": model,
        "tools": len(prompt.tools),
        "synthetic_tools": synthetic,
        "skills": len(profile.bound_skills),
        "system_prompt_chars": len(prompt.system),
        "tool_schema_bytes": len(json.dumps(prompt.tools)),
        "system_prompt_tokens": system_tokens,
        "tool_schema_tokens": total - system_tokens,
        "total_tokens": total,
        "target": TARGET,
        "ok": total <= TARGET,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="gpt-4o", help="tokenizer to count with")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--check", action="store_true", help=f"exit 1 above {TARGET} tokens")
    args = parser.parse_args(argv)
    result = measure(args.model)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"model               {result['model']}")
        print(f"tools               {result['tools']} ({len(result['synthetic_tools'])} synthetic)")
        print(f"skills              {result['skills']}")
        print(f"system prompt       {result['system_prompt_tokens']} tokens")
        print(f"                    ({result['system_prompt_chars']} characters)")
        print(f"tool schemas        {result['tool_schema_tokens']} tokens")
        print(f"                    ({result['tool_schema_bytes']} bytes of JSON)")
        print(f"total               {result['total_tokens']} tokens (target <= {TARGET})")
    return 1 if args.check and not result["ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
