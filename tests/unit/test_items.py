"""Key-value items as memories: names and tuples map one to one, values become dialogue."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.store.base import InvalidNamespaceError
from pydantic import TypeAdapter

from ripplegraph.agent.errors import InvalidValueError, RippleGraphError
from ripplegraph.agent.memory import MAX_TTL_MINUTES, MAX_TURN_CHARS, Namespace, Turn
from ripplegraph.agent.memory.items import (
    ASSISTANT,
    InvalidNamespace,
    checked_messages,
    checked_ttl,
    checked_value,
    name_of,
    namespace_named,
    namespace_of,
    sessions_of,
    stored_namespace,
    tuple_of,
    turn_id,
)
from ripplegraph.agent.memory.text import visible, without_controls

labels = st.text(min_size=1, max_size=12).filter(lambda s: "." not in s and "\x00" not in s)


@given(st.lists(labels, min_size=1, max_size=4))
def test_a_namespace_tuple_maps_to_a_valid_namespace_and_back(parts: list[str]) -> None:
    try:
        namespace = namespace_of(parts)
    except InvalidValueError:  # too long once written: refused, never cut
        return
    assert TypeAdapter(Namespace).validate_python(namespace) == namespace
    assert tuple_of(namespace) == tuple(parts)


def test_distinct_tuples_never_share_a_namespace() -> None:
    tuples = [("a", "b"), ("a/b",), ("a:2Fb",), ("a", "b", "c"), ("a/b", "c"), ("é",), (":C3:A9",)]
    assert len({namespace_of(t) for t in tuples}) == len(tuples)
    assert namespace_of(("users", "alice")) == "users/alice"  # plain labels read as written


def test_namespaces_written_elsewhere_read_as_one_label_each() -> None:
    assert tuple_of("locomo.conv-26") == ("locomo.conv-26",)
    assert tuple_of("chat:1") == ("chat:1",)
    assert tuple_of("team/ana") == ("team", "ana")


def test_a_namespace_too_long_is_refused_with_its_length() -> None:
    with pytest.raises(InvalidValueError, match="130 characters"):
        namespace_of(["x" * 130])


def test_a_turn_value_is_one_turn_of_its_session() -> None:
    value = {
        "text": "I'm allergic to shellfish.",
        "speaker": "Maya",
        "date": "2024-04-01",
        "session": "s1",
    }
    (session,) = sessions_of("k1", value, user_name="User")
    assert session.id == "s1"
    assert session.date == datetime(2024, 4, 1)
    assert session.turns == [Turn(speaker="Maya", text="I'm allergic to shellfish.", id="0:k1")]


def test_langmem_content_is_said_by_the_user() -> None:
    (session,) = sessions_of("k", {"content": "Prefers window seats."}, user_name="Maya")
    assert session.id == "item:k"
    assert session.turns[0].speaker == "Maya"
    (structured,) = sessions_of("k", {"content": {"food": "no shellfish"}}, user_name="Maya")
    assert structured.turns[0].text == '{"food": "no shellfish"}'


def test_messages_keep_what_user_and_assistant_said_not_instructions() -> None:
    messages = [
        SystemMessage("You are helpful."),
        HumanMessage("My dog Rex is sick."),
        {"role": "assistant", "content": "Sorry to hear that."},
        AIMessage(""),
        {"role": "user", "content": [{"type": "text", "text": "He is 12."}], "name": "Sam"},
    ]
    (session,) = sessions_of("k", {"messages": messages}, user_name="Ana")
    assert [(t.speaker, t.text, t.id) for t in session.turns] == [
        ("Ana", "My dog Rex is sick.", turn_id("k", 1)),
        (ASSISTANT, "Sorry to hear that.", turn_id("k", 2)),
        ("Sam", "He is 12.", turn_id("k", 4)),
    ]


def test_index_fields_name_the_text() -> None:
    value = {"title": "Diet", "details": {"note": "vegetarian since May"}, "n": 3}
    (session,) = sessions_of("k", value, user_name="U", index=["title", "details.note"])
    assert session.turns[0].text == "Diet vegetarian since May"


def test_data_values_are_not_dialogue() -> None:
    assert sessions_of("k", {"age": 31, "kind": "profile"}, user_name="U") == []
    assert sessions_of("k", {"text": 5}, user_name="U") == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"messages": "hello"}, "must be a list"),
        ({"messages": [42]}, r"messages\[0\] is not a message"),
        ({"messages": [{"content": "hi"}]}, r"messages\[0\]\.role must be"),
        ({"messages": [{"role": "ai", "content": " "}]}, "no user or assistant message"),
        ({"messages": [{"role": "system", "content": "Be nice."}]}, "no user or assistant"),
        ({"text": "   "}, "value.text is empty"),
        ({"text": "\u200b\x00\x1b\u2060"}, "value.text is empty"),
        ({"content": None}, "value.content is empty"),
        ({"text": "x" * 1_000_001}, "one turn holds at most 1,000,000"),
    ],
)
def test_malformed_values_are_refused_clearly(value: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidValueError, match=message):
        sessions_of("k", value, user_name="U")


# --- one name, one namespace, on every surface ----------------------------------------------


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("alice", "alice"),
        (" users / maya ", "users/maya"),
        ("maya@example.com", "maya@example.com"),
        ("名前", "名前"),
        ("café", "café"),
        ("ns with space", "ns:20with:20space"),
        ("[/bold]", ":5B/bold:5D"),  # "/" separates labels in a name
        ("¼ x²", ":C2:BC:20x:C2:B2"),
    ],
)
def test_a_name_is_stored_under_one_namespace_and_shown_as_given(name: str, namespace: str) -> None:
    assert namespace_named(name) == namespace
    assert name_of(namespace) == "/".join(part.strip() for part in name.strip().split("/"))
    assert TypeAdapter(Namespace).validate_python(namespace) == namespace


@pytest.mark.parametrize(
    "name", ["", "   ", "\x00", "\x1b[2J", "\u200b\u2060", "a//b", "/a", "a\x07b"]
)
def test_a_name_that_shows_nothing_or_holds_controls_is_refused_everywhere(name: str) -> None:
    with pytest.raises(InvalidNamespace) as refused:
        namespace_named(name)
    assert isinstance(refused.value, RippleGraphError)
    assert isinstance(refused.value, InvalidNamespaceError)  # and LangGraph's, for its callers


def test_a_namespace_an_earlier_version_spelled_is_still_found_where_it_is() -> None:
    earlier = ":E5:90:8D:E5:89:8D"  # 名前 as versions before this one escaped it
    assert stored_namespace(("名前",), lambda ns: ns == earlier) == earlier
    assert stored_namespace(("名前",), lambda ns: ns in (earlier, "名前")) == "名前"
    assert stored_namespace(("名前",), lambda ns: False) == "名前"
    assert tuple_of(earlier) == ("名前",)


@pytest.mark.parametrize("ttl", [5e9, 1e300, math.nan, math.inf, -1, 0, True, "5"])
def test_a_time_to_live_the_clock_cannot_hold_is_refused(ttl: object) -> None:
    with pytest.raises(InvalidValueError, match="time to live"):
        checked_ttl(ttl)
    assert checked_ttl(None) is None and checked_ttl(1) == 1.0
    assert checked_ttl(MAX_TTL_MINUTES) == MAX_TTL_MINUTES


@pytest.mark.parametrize(
    "value", [{"x": math.nan}, {"when": datetime(2024, 1, 1)}, {"x": {1, 2}}, ["not", "a dict"]]
)
def test_a_value_that_is_not_json_is_refused_before_anything_is_written(value: object) -> None:
    with pytest.raises(InvalidValueError):
        checked_value(value)


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([{"text": "hello"}], r"messages\[0\]\.role"),
        ([{"role": "user", "content": "   "}], r"messages\[0\]\.content is empty"),
        ([{"role": "user", "content": "hi"}, {"role": "ai", "content": "\u200b"}], r"\[1\]"),
        ([{"role": "wizard", "content": "hi"}], r"messages\[0\]\.role"),
        (["hello"], r"messages\[0\] is not a message"),
        ([], "nothing to remember"),
        ([SystemMessage("Be brief.")], "nothing to remember"),
    ],
)
def test_the_client_refuses_a_careless_conversation_naming_the_field(
    messages: list[object], field: str
) -> None:
    with pytest.raises(InvalidValueError, match=field):
        checked_messages(messages)


def test_a_conversation_is_kept_as_plain_messages_and_a_tool_call_says_nothing() -> None:
    call = AIMessage("", tool_calls=[{"name": "search", "args": {}, "id": "c1"}])
    kept = checked_messages([HumanMessage("Book a table."), call, {"role": "tool", "content": ""}])
    assert [m["role"] for m in kept] == ["human", "ai", "tool"]


def test_a_long_turn_becomes_several_memories_cut_where_the_text_breaks() -> None:
    paragraph = "The build failed again. " * 500  # 12,000 characters
    said = paragraph + "\n\n" + paragraph + "\n\n" + "x" * 25_000
    (session,) = sessions_of("k", {"text": said}, user_name="U")
    texts = [t.text for t in session.turns]
    assert all(len(t) <= MAX_TURN_CHARS for t in texts) and len(texts) == 4
    assert "".join(texts) == said.strip()
    assert texts[0].endswith("\n\n"), "cut at the paragraph"
    assert [t.id for t in session.turns] == ["0:k", "0:k#2", "0:k#3", "0:k#4"]


def test_control_characters_never_reach_a_memory() -> None:
    turn = Turn(speaker="Mallory\x1b", text="full\x02time\x00 there\x1b[2J\r\n\tok")
    assert turn.text == "full time  there [2J\r\n\tok" and turn.speaker == "Mallory "
    assert without_controls("\x07\x9b\ud800") == "   " and not visible("\u200b \x00\u2060")
