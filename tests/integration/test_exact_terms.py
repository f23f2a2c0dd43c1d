"""Exact terms are not drowned: among 400 look-alikes, the one memory holding a code wins."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ripplegraph.agent.eval.exact_terms import probe, put_look_alikes
from ripplegraph.agent.recall_config import FULL
from tests.conftest import deployed

pytestmark = pytest.mark.integration


def test_a_code_held_by_one_memory_ranks_it_first_among_look_alikes(tmp_path: Path) -> None:
    context = deployed(store_dir=str(tmp_path / "store"))
    data = put_look_alikes(context)
    found = probe(context, data)
    assert found == {"codes": 60, "first_for_the_code": 60, "top_3_inside_a_question": 60}

    # Ranked by ρ, the look-alikes drown a code without the exact channel; the learned ranker
    # (the lexical channel's rank and share) finds it either way.
    hand = replace(FULL, exact_terms=False, learned=False)
    drowned = probe(context.model_copy(update={"recall_settings": hand}), data, codes=20)
    assert drowned["first_for_the_code"] < 18, f"the exact channel is what finds them: {drowned}"
    learned = replace(FULL, exact_terms=False)
    kept = probe(context.model_copy(update={"recall_settings": learned}), data, codes=20)
    assert kept["first_for_the_code"] == 20
