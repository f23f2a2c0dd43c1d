"""Derived caches: one value per namespace generation, least recently used first out."""

from __future__ import annotations

from pathlib import Path

from ripplegraph.agent.store.derived import DerivedCache

STORE = Path("/stores/a")


def test_a_bounded_cache_drops_the_least_recently_used_entry() -> None:
    cache: DerivedCache[str] = DerivedCache(limit=2)
    builds: list[str] = []

    def get(query: str, generation: int = 1) -> str:
        return cache.get(
            STORE, "ns", generation, (query,), lambda: builds.append(query) or query.upper()
        )

    assert [get("a"), get("b"), get("a")] == ["A", "B", "A"]
    assert builds == ["a", "b"]
    get("c")  # "b" is now the least recently used
    get("a")
    get("b")
    assert builds == ["a", "b", "c", "b"]
    get("a", generation=2)  # the namespace changed: rebuilt
    assert builds[-1] == "a"


def test_clearing_one_store_keeps_another_stores_entries() -> None:
    cache: DerivedCache[int] = DerivedCache()
    builds: list[Path] = []
    for store in (STORE, Path("/stores/b")):
        cache.get(store, "ns", 1, (), lambda s=store: builds.append(s) or 1)
    cache.clear(STORE)
    for store in (STORE, Path("/stores/b")):
        cache.get(store, "ns", 1, (), lambda s=store: builds.append(s) or 1)
    assert builds == [STORE, Path("/stores/b"), STORE]
