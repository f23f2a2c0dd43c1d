"""Key-value items as memories: namespace tuples map one to one, values become dialogue."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import TypeAdapter

from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory import Namespace, Turn
from ripplegraph.agent.memory.items import ASSISTANT, namespace_of, sessions_of, tuple_of, turn_id

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
    assert sessions_of("k", {"text": "   "}, user_name="U") == []


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"messages": "hello"}, "must be a list"),
        ({"messages": [42]}, r"messages\[0\] is not a message"),
        ({"text": "x" * 20_001}, "one turn holds at most"),
    ],
)
def test_malformed_values_are_refused_clearly(value: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidValueError, match=message):
        sessions_of("k", value, user_name="U")
