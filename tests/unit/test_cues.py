from datetime import datetime

import pytest

from ripplegraph.agent.decisions.policies.extraction import OfflineExtractor, classify_kind
from ripplegraph.agent.decisions.policies.query import parse_query, without_names
from ripplegraph.agent.memory import MemoryKind, Session, Turn
from ripplegraph.agent.memory.cues import CueExtractor, TimeResolver
from ripplegraph.agent.memory.text import normalise_cue


def test_speaker_comes_first_and_names_in_name_like_context_are_people() -> None:
    cues = CueExtractor().extract("Sam says we should book it for Maya's birthday.", "Alex")
    assert cues.people == ("Alex", "Sam", "Maya")


def test_locative_phrase_is_a_place_not_a_person() -> None:
    cues = CueExtractor().extract("We had dinner at Harbor Grill and then moved to Sweden.", "Alex")
    assert set(cues.places) == {"Harbor Grill", "Sweden"}
    assert cues.people == ("Alex",)


def test_common_place_nouns_are_places() -> None:
    assert CueExtractor().extract("Took the kids to the beach.", "Mel").places == ("beach",)


def test_learned_names_are_found_at_sentence_start() -> None:
    extractor = CueExtractor()
    assert "Maya" not in extractor.extract("Maya baked a cake.").people
    extractor.learn("We planned dinner with Maya.")
    assert "Maya" in extractor.extract("Maya baked a cake.").people


def test_gazetteer_people_are_matched_case_insensitively() -> None:
    extractor = CueExtractor(people=["Caroline"])
    assert extractor.extract("have you asked caroline yet?").people == ("Caroline",)


def test_pronouns_months_and_titles_are_not_people() -> None:
    cues = CueExtractor().extract("I said Hi to him in May and read The Name of the Wind.", "Jo")
    assert cues.people == ("Jo",)


def test_normalise_cue() -> None:
    assert normalise_cue("  Harbor   Grill’s ") == "harbor grill's"
    assert normalise_cue("Maya.") == "maya"


def test_kind_rules() -> None:
    assert classify_kind("Maya is allergic to seafood") is MemoryKind.STATE
    assert classify_kind("We are going to Paris next month") is MemoryKind.PLAN
    assert classify_kind("I bought five mugs") is MemoryKind.ASSET
    assert classify_kind("Lovely weather!") is MemoryKind.OTHER


def test_offline_extraction_one_unit_per_turn_with_cues_and_time() -> None:
    session = Session(
        id="s1",
        date=datetime(2024, 5, 1, 21, 0),
        turns=[
            Turn(speaker="Alex", text="We had lunch with Maya yesterday."),
            Turn(speaker="Alex", text="Maya is allergic to seafood.", image_caption="a shrimp"),
            Turn(speaker="Sam", text="   "),
        ],
    )
    units = OfflineExtractor().extract("ns", [session], [], [])
    assert [u.text for u in units] == [
        "Alex: We had lunch with Maya yesterday.",
        "Alex: Maya is allergic to seafood. [shared an image: a shrimp]",
    ]
    first, second = units
    assert first.people == ("Alex", "Maya") and second.people == ("Alex", "Maya")
    assert first.time is not None and first.time.start == datetime(2024, 4, 30)
    assert second.time is not None and second.time.start == datetime(2024, 5, 1)
    assert second.provenance.turn_ids == ("s1:2",) and second.provenance.speaker == "Alex"
    assert second.kind is MemoryKind.STATE
    again = OfflineExtractor().extract("ns", [session], [], [])
    assert [u.id for u in again] == [u.id for u in units]
    assert OfflineExtractor().extract("other", [session], [], [])[0].id != first.id


def test_a_question_without_its_names_keeps_what_it_asks() -> None:
    assert without_names("What books has Melanie read?", ["Melanie"]) == "What books has read?"
    assert (
        without_names("Should we go to Harbor Grill for Maya's birthday?", ["Maya", "Harbor Grill"])
        == "Should we go to for birthday?"
    )
    assert without_names("Maya?", ["Maya"]) == "", "a bare name leaves nothing to align with"
    assert without_names("What did we eat?", []) == ""


def test_parsed_query_carries_its_content_for_alignment() -> None:
    cues = parse_query("What is Maya allergic to?", ["Maya", "Sam"], [], None, TimeResolver())
    assert cues.people == ["Maya"]
    assert cues.content == "What is allergic to?"


@pytest.mark.parametrize(
    ("question", "decision", "first_person"),
    [
        ("What is Maya allergic to?", False, False),
        ("Can you recommend a restaurant for Maya?", True, False),
        ("Any ideas for celebrating my birthday with friends?", True, True),
        ("Where could I go climbing outdoors this weekend?", True, True),
        ("What did we eat in Lisbon?", False, True),
        # A question's own clause does not invert: the asker weighing their options still.
        ("What are some novels I should read this summer?", True, True),
        ("What are some adventures we could try in Lisbon?", True, True),
        ("What did I say I can't eat?", False, True),
        ("What did Maya say she should bring?", False, False),
        # A request for suggestions weighs the asker's options too; a list about someone
        # named, or asked of the past, is recalled.
        ("How can I best prepare for the GRE exam?", True, True),
        ("Could you help me find a climbing gym nearby?", True, True),
        ("What are some fun activities to do in Lisbon?", True, False),
        ("What are some good resources for someone like me?", True, True),
        ("What are some of Maya's hobbies?", False, False),
        ("What are some changes Maya has faced this year?", False, False),
        ("What was the book you found for me?", False, True),
    ],
)
def test_a_decision_and_whose_it_is(question: str, decision: bool, first_person: bool) -> None:
    cues = parse_query(question, ["Maya"], [], None, TimeResolver())
    assert (cues.decision, cues.first_person) == (decision, first_person)


def test_a_vocabulary_word_in_lower_case_names_no_one() -> None:
    """Chat puts common words in the people vocabulary ("Options:"); a name is written as one."""
    vocabulary = ["Maya", "Options"]
    resolver = TimeResolver()
    asked = parse_query("What are some rug options for my den?", vocabulary, [], None, resolver)
    recalled = parse_query("What are some Maya options?", vocabulary, [], None, resolver)
    assert (asked.decision, recalled.decision) == (True, False)
