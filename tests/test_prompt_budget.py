"""The fixed prompt of an agent with 24 tools and 10 skills stays within 3,000 tokens."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "prompt_tokens.py"


@pytest.mark.slow
@pytest.mark.parametrize("model", ["gpt-4o", "deepseek/deepseek-chat"])
def test_prompt_tokens_bench_meets_its_target(model):
    # litellm counts tool schemas about twice as heavily for DeepSeek as for OpenAI models.
    done = subprocess.run(
        [sys.executable, str(BENCH), "--json", "--check", "--model", model],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["model"] == model
    assert result["tools"] == 24 and result["skills"] == 10
    assert 0 < result["total_tokens"] <= 3000
    assert result["system_prompt_tokens"] > 0 and result["tool_schema_tokens"] > 0
