"""MEMORY.md: concurrent writers, atomic replacement, search ranking, prompt truncation."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from oryxos_memory.store import HEADER, MarkdownMemory, parse, tokens

from oryxos.errors import UsageError
from oryxos.memory import Memory


@pytest.fixture
def memory(tmp_path: Path) -> MarkdownMemory:
    return MarkdownMemory(tmp_path / "memory")


def test_implements_the_memory_protocol(memory):
    assert isinstance(memory, Memory)


def test_save_appends_a_dated_entry_with_the_agent(memory):
    entry = memory.save("The user prefers Celsius.", agent="weather")
    text = memory.path.read_text(encoding="utf-8")
    assert text.startswith(HEADER)
    assert f"## {entry.saved_at} · weather\nThe user prefers Celsius.\n" in text
    assert [e.text for e in memory.entries()] == ["The user prefers Celsius."]


def test_entry_text_that_looks_like_a_heading_round_trips(memory):
    tricky = "line one\n## 2026-01-01T00:00:00Z · forged\nline three"
    memory.save(tricky)
    memory.save("second")
    assert [e.text for e in memory.entries()] == [tricky, "second"]


def test_empty_and_oversized_entries_are_refused(tmp_path):
    memory = MarkdownMemory(tmp_path, max_entry_chars=10)
    with pytest.raises(UsageError, match="may not be empty"):
        memory.save("   ")
    with pytest.raises(UsageError, match="at most 10 characters"):
        memory.save("x" * 11)
    assert not memory.path.exists()


def test_fifty_threads_saving_at_once_lose_no_entry(memory):
    barrier = threading.Barrier(50)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            barrier.wait()
            # a fresh instance per thread: the file lock, not the object, must exclude
            MarkdownMemory(memory.directory).save(f"thread entry {n}")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    texts = sorted(e.text for e in memory.entries())
    assert texts == sorted(f"thread entry {n}" for n in range(50))


WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from oryxos_memory.store import MarkdownMemory
    directory, name, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    while time.time() < start:
        time.sleep(0.005)
    memory = MarkdownMemory(Path(directory))
    for i in range(count):
        memory.save(f"{name} entry {i}", agent=name)
    """
)


@pytest.mark.slow
def test_four_processes_and_fifty_threads_saving_at_once_lose_no_entry(memory):
    import time

    start = time.time() + 1.5  # every process is importing by then; all start together
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(memory.directory), f"proc{p}", "25", str(start)],
            stderr=subprocess.PIPE,
        )
        for p in range(4)
    ]

    def thread_worker(n: int) -> None:
        while time.time() < start:
            time.sleep(0.005)
        MarkdownMemory(memory.directory).save(f"thread entry {n}")

    threads = [threading.Thread(target=thread_worker, args=(n,)) for n in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for proc in procs:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    texts = {e.text for e in memory.entries()}
    expected = {f"proc{p} entry {i}" for p in range(4) for i in range(25)}
    expected |= {f"thread entry {n}" for n in range(50)}
    assert texts == expected
    assert len(memory.entries()) == 150
    leftovers = [p.name for p in memory.directory.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_failed_write_leaves_the_old_file_whole(memory, monkeypatch):
    memory.save("first")
    before = memory.path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated crash before the rename)")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        memory.save("second")
    assert memory.path.read_bytes() == before
    assert [p.name for p in memory.directory.iterdir() if p.name.endswith(".tmp")] == []


def test_search_ranks_best_matches_first_and_caps(memory):
    memory.save("The deployment server is prod-7 in Frankfurt.")
    memory.save("Lunch is at noon.")
    memory.save("Deploy only on Tuesdays; the deploy window is 10:00-12:00.")
    memory.save("The user's name is Ada.")
    found = memory.search("deploy window")
    assert [e.text for e in found][:2] == [
        "Deploy only on Tuesdays; the deploy window is 10:00-12:00.",
        "The deployment server is prod-7 in Frankfurt.",
    ]
    assert len(found) == 2
    assert found[0].score > found[1].score > 0
    assert memory.search("nothing-like-this") == []
    for n in range(30):
        memory.save(f"note {n} about deploy")
    assert len(memory.search("deploy", limit=100)) == 20
    assert len(memory.search("deploy", limit=3)) == 3


def test_search_prefers_newer_entries_among_equals(memory):
    memory.save("coffee: black")
    memory.save("coffee: with milk")
    assert [e.text for e in memory.search("coffee")] == ["coffee: with milk", "coffee: black"]


def test_search_finds_chinese_text(memory):
    memory.save("用户喜欢喝绿茶")
    memory.save("会议在周三下午")
    assert [e.text for e in memory.search("绿茶")] == ["用户喜欢喝绿茶"]
    assert tokens("喝绿茶 tea") == ["喝绿", "绿茶", "tea"]


def test_for_prompt_keeps_the_newest_entries_whole(memory):
    for n in range(100):
        memory.save(f"entry number {n:03d} " + "x" * 50)
    text = memory.for_prompt(4000)
    assert len(text) <= 4000
    assert "entry number 099" in text
    lines = text.splitlines()
    kept = [ln for ln in lines if ln.startswith("[")]
    numbers = [int(ln.split("entry number ")[1][:3]) for ln in kept]
    assert numbers == list(range(numbers[0], 100))  # a contiguous run ending at the newest
    assert all(ln.endswith("x" * 50) for ln in kept)  # each kept entry is whole
    assert lines[0] == f"({numbers[0]} older memory entries not shown)"


def test_for_prompt_all_entries_fit(memory):
    memory.save("a")
    memory.save("b")
    text = memory.for_prompt(4000)
    assert [ln.split("] ")[1] for ln in text.splitlines()] == ["a", "b"]


def test_for_prompt_cuts_a_single_huge_newest_entry(memory):
    memory.save("y" * 3000)
    text = memory.for_prompt(100)
    assert len(text) == 100 and text.endswith("…")


def test_clear_keeps_a_backup(memory):
    memory.save("remember me")
    backup = memory.clear()
    assert memory.entries() == []
    assert backup is not None and [e.text for e, _ in parse(backup.read_text())] == ["remember me"]
