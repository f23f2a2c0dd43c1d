"""A stranger's first hour: the ids printed are the ids taken, every mistake is one line.

The command line and the Python API accept the ids they print, refuse the same mistakes with
the same one-sentence errors, say so when nothing matched, and never create a store by
reading; the context a prompt reads is plain text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.errors import InvalidValueError, NotFoundError, StoreError
from ripplegraph.agent.surfaces.client import Memory

pytestmark = pytest.mark.integration


def run(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output.strip().splitlines()


def refused(args: tuple[str, ...], *words: str) -> str:
    """The one ``error:`` line a refused command prints (exit status 2)."""
    code, lines = run(*args)
    assert code == 2, lines
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


def test_the_ids_add_prints_are_the_ids_forget_takes(tmp_path: Path) -> None:
    store = ("--store", str(tmp_path / "store"))
    code, lines = run("add", "-n", "maya", "I'm allergic to shellfish.", *store)
    assert code == 0, lines
    allergy = lines[-1]
    run("add", "-n", "maya", "I moved to Lisbon in May.", *store)
    code, lines = run("list", "-n", "maya", "--json", *store)
    listed = [item["key"] for item in json.loads(lines[-1])]
    assert allergy in listed and len(listed) == 2

    refused(("forget", "-n", "maya", "--memory-id", allergy[:8], *store), allergy[:8], "nothing")
    code, lines = run("list", "-n", "maya", "--json", *store)
    assert len(json.loads(lines[-1])) == 2, "a refused forget forgot nothing"

    code, lines = run("forget", "-n", "maya", "--memory-id", allergy, "--json", *store)
    assert code == 0, lines
    done = json.loads(lines[-1])
    assert len(done["forgotten"]) == 1 and done["remaining"] == 1
    code, lines = run("list", "-n", "maya", "--json", *store)
    assert [item["key"] for item in json.loads(lines[-1])] == [k for k in listed if k != allergy]


@pytest.mark.parametrize(
    "command",
    [
        ("list", "-n", "maya"),
        ("namespaces",),
        ("ask", "What is Maya allergic to?", "-n", "maya"),
        ("trace", "0123abcd"),
        ("check",),
        ("compact",),
        ("calibrate", "-n", "maya"),
        ("export", "-n", "maya", "--out", "maya.jsonl"),
        ("forget", "-n", "maya", "--all"),
    ],
)
def test_reading_a_store_that_is_not_there_creates_nothing(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    missing = tmp_path / "mistyped" / "store"
    refused((*command, "--store", str(missing)), "no store at", str(missing), "--store")
    assert not (tmp_path / "mistyped").exists()


def test_a_store_that_is_a_file_is_one_line_in_the_cli_and_an_error_in_python(
    tmp_path: Path,
) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("not a store")
    refused(("add", "-n", "maya", "hello", "--store", str(file)), "is a file")
    refused(("list", "-n", "maya", "--store", str(file)), "is a file")
    with pytest.raises(StoreError, match="is a file"):
        Memory(file)
    assert file.read_text() == "not a store"


def test_an_unknown_namespace_asks_whether_the_store_is_right(tmp_path: Path) -> None:
    store = ("--store", str(tmp_path / "store"))
    run("add", "-n", "maya", "hello", *store)
    refused(("list", "-n", "mya", *store), "unknown namespace 'mya'", "maya", "--store")


@pytest.mark.parametrize(
    "command",
    [
        ("list",),
        ("add",),
        ("nosuch",),
        ("list", "-n", "maya", "--limit", "abc"),
        ("bench", "locomo"),
    ],
)
def test_usage_mistakes_are_one_error_line(command: tuple[str, ...]) -> None:
    line = refused(command)
    assert "--help" in line and "Usage:" not in line


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    memory = Memory(tmp_path_factory.mktemp("first-hour") / "store")
    memory.add("I'm allergic to shellfish & peanuts.", user_id="maya")
    return memory


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda m: m.search("", user_id="maya"), "the query is empty"),
        (lambda m: m.search("   ", user_id="maya"), "the query is empty"),
        (lambda m: m.search("allergy", user_id="maya", limit=-1), "the limit must be from 0"),
        (lambda m: m.search("allergy", user_id="maya", limit="3"), "whole number"),
        (lambda m: m.get_all(user_id="maya", limit=-1), "the limit must be from 0"),
        (lambda m: m.get_all(user_id="maya", offset=-2), "the offset must be 0 or more"),
        (lambda m: m.store.search(("maya",), limit=-1), "the limit must be from 0"),
        (lambda m: m.store.search(("maya",), query="  "), "the query is empty"),
        (lambda m: m.add("", user_id="maya"), "nothing to remember"),
        (lambda m: m.add("   ", user_id="maya"), "nothing to remember"),
        (lambda m: m.add([], user_id="maya"), "nothing to remember"),
    ],
)
def test_the_python_api_refuses_what_the_cli_refuses(memory: Memory, call, words: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidValueError, match=words):
        call(memory)
    assert len(memory.get_all(user_id="maya")) == 1, "nothing stored, nothing lost"


def test_deleting_an_unknown_id_says_so(memory: Memory) -> None:
    with pytest.raises(NotFoundError, match="'no-such-id'"):
        memory.delete("no-such-id", user_id="maya")
    assert len(memory.get_all(user_id="maya")) == 1


def test_the_context_a_prompt_reads_is_plain_text(memory: Memory) -> None:
    found = memory.search("What is Maya allergic to?", user_id="maya")
    assert "I'm allergic to shellfish &amp; peanuts." in found.context
    assert "&#x27;" not in found.context
