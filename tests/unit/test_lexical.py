"""The growing BM25 index scores exactly as rank-bm25 does, and follows writes and deletes."""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.store.derived import Changes, DerivedCache
from ripplegraph.agent.store.lexical import Bm25, ranked, sole_holders

FILLER = ["Tom moved to Porto", "the cat sleeps", "dinner at eight", "a walk", "rain today"]
WORDS = ["maya", "peanut", "allergy", "dinner", "harbor", "grill", "tom", "porto", "cat", "the"]


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=1, max_size=40).filter(
        any  # rank-bm25 itself divides by zero on a corpus without a word
    ),
    query=st.lists(st.sampled_from([*WORDS, "unseen"]), min_size=1, max_size=5),
)
def test_scores_equal_rank_bm25(corpus: list[list[str]], query: list[str]) -> None:
    ours = Bm25()
    for index, tokens in enumerate(corpus):
        ours.add(str(index), tokens)
    _, scores = ours.scores(query)
    np.testing.assert_allclose(scores, BM25Okapi(corpus).get_scores(query), atol=1e-9)


def test_scores_stay_equal_as_documents_arrive() -> None:
    rng = random.Random(7)
    corpus = [[rng.choice(WORDS) for _ in range(rng.randint(0, 15))] for _ in range(300)]
    ours = Bm25()
    for size, tokens in enumerate(corpus, start=1):
        ours.add(str(size), tokens)
        if size % 37 == 0 or size == len(corpus):
            query = ["maya", "the", "peanut", "maya"]
            expected = BM25Okapi(corpus[:size]).get_scores(query)
            np.testing.assert_allclose(ours.scores(query)[1], expected, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    corpus=st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=2, max_size=30),
    removed=st.sets(st.integers(0, 29), min_size=1),
    query=st.lists(st.sampled_from([*WORDS, "unseen"]), min_size=1, max_size=5),
)
def test_scores_after_removals_equal_rank_bm25_over_what_remains(
    corpus: list[list[str]], removed: set[int], query: list[str]
) -> None:
    ours = Bm25()
    for index, tokens in enumerate(corpus):
        ours.add(str(index), tokens)
    for index in sorted(removed):
        assert ours.remove(str(index), corpus[index] if index < len(corpus) else [])
    remaining = [tokens for index, tokens in enumerate(corpus) if index not in removed]
    ids, scores = ours.scores(query)
    kept = [ids.index(str(i)) for i in range(len(corpus)) if i not in removed]
    if any(remaining):  # rank-bm25 divides by zero without a word
        expected = BM25Okapi(remaining).get_scores(query)
        np.testing.assert_allclose(scores[kept], expected, atol=1e-9)
    assert not any(scores[i] for i in range(len(ids)) if ids[i] == "")
    assert not ours.remove("0", ["not", "its", "words"]) or 0 in removed


def unit(number: int, text: str) -> MemoryUnit:
    provenance = Provenance(
        session_id="s", turn_ids=[str(number)], speaker="U", session_time=datetime(2024, 1, 1)
    )
    return MemoryUnit(id=text, namespace="ns", text=text, provenance=provenance)  # ids name content


class Log:
    """A namespace's units by write sequence, as the relational store reports them."""

    def __init__(self) -> None:
        self.rows: dict[int, MemoryUnit] = {}
        self.generation = 0
        self.removals = 0
        self.asked: list[int] = []

    def write(self, seq: int, text: str) -> None:
        self.rows[seq] = unit(seq, text)
        self.generation += 1

    def delete(self, seq: int) -> None:
        del self.rows[seq]
        self.generation += 1
        self.removals += 1

    def changes(self, seq: int) -> Changes:
        self.asked.append(seq)
        return Changes(sorted((n, u) for n, u in self.rows.items() if n > seq), self.removals)


def test_a_followed_index_grows_with_writes_and_rebuilds_after_a_delete() -> None:
    log = Log()
    cache: DerivedCache[Bm25] = DerivedCache()

    def found() -> set[str]:
        index = cache.follow(Path("s"), "ns", log.generation, log.changes, Bm25.of, Bm25.extended)
        return {m for m, _ in ranked(index, "peanuts", 5)}

    allergy, brittle, harbor, again = (
        "Maya is allergic to peanuts", "Maya loves peanuts brittle", "Porto has a harbor",
        "peanuts again",
    )  # fmt: skip
    for seq, text in enumerate([allergy, *FILLER], start=1):
        log.write(seq, text)

    assert found() == {allergy}
    log.write(10, brittle)
    assert found() == {allergy, brittle}
    assert log.asked == [0, 6], "the new write was added, not rebuilt"
    log.delete(10)
    log.write(11, harbor)  # the same count as before the delete
    assert found() == {allergy}
    assert log.asked[-2:] == [10, 0], "a delete is noticed and the index rebuilt"
    log.delete(11)
    log.write(11, again)  # a sequence number reused after a delete
    assert found() == {allergy, again}
    assert log.asked[-2:] == [11, 0]
    log.write(12, "more peanuts")
    assert found() == {allergy, again, "more peanuts"}
    assert log.asked[-1] == 11


def test_a_forget_shrinks_the_index_and_a_reused_sequence_number_is_still_seen() -> None:
    log = Log()
    cache: DerivedCache[Bm25] = DerivedCache()

    def found() -> set[str]:
        index = cache.follow(
            Path("s"), "ns", log.generation, log.changes, Bm25.of, Bm25.extended, Bm25.without
        )
        return {m for m, _ in ranked(index, "peanuts", 5)}

    def forget(seq: int) -> None:
        gone = log.rows[seq]
        log.delete(seq)
        cache.forgotten(Path("s"), "ns", [gone], log.removals, max(log.rows, default=0))

    for seq, text in enumerate(["Maya is allergic to peanuts", *FILLER, "peanuts brittle"], 1):
        log.write(seq, text)
    assert found() == {"Maya is allergic to peanuts", "peanuts brittle"}
    forget(7)  # the newest: its sequence number is free again
    log.write(7, "salted peanuts")
    assert found() == {"Maya is allergic to peanuts", "salted peanuts"}
    assert 0 not in log.asked[1:], "shrunk and grown, never rebuilt"
    log.delete(7)  # another process's delete: this cache did not see it
    forget(1)
    assert found() == set()
    assert log.asked[-1] == 0, "a deletion it did not shrink by rebuilds it"


def test_an_identifier_one_document_holds_names_it() -> None:
    index = Bm25()
    index.add("a", ["keys", "drawer", "mk3f9a"])
    index.add("b", ["keys", "drawer", "mk77b1", "zebra", "2023"])
    index.add("c", ["keys", "table", "zebra"])
    assert sole_holders(index, "mk3f9a keys", 5) == [("a", 1.0)]
    assert sole_holders(index, "2023 mk77b1 mk3f9a", 5) == [("b", 2.0), ("a", 1.0)]
    assert sole_holders(index, "2023 mk77b1 mk3f9a", 1) == [("b", 2.0)]
    assert sole_holders(index, "keys drawer", 5) == [], "terms many documents hold name none"
    assert sole_holders(index, "table", 5) == [], "a word without a digit is no identifier"
    index.remove("a", ["keys", "drawer", "mk3f9a"])
    assert sole_holders(index, "mk3f9a", 5) == []
