"""The local embedding model: exported once, then run by ONNX Runtime with the same vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ripplegraph.agent.errors import EmbeddingSetupError
from ripplegraph.agent.models.local_embeddings import LocalEmbeddings, reference_model

pytestmark = pytest.mark.integration

TEXTS = [
    "",
    "Hi!",
    "I'm allergic to shellfish, so no seafood for me.",
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "Über café déjà vu — 東京で寿司を食べた 🍣",
    "order #A7-99213 shipped to 14 Elm Street on 2023-05-08",
    " ".join(f"word{i} and some filler about the weekend hike" for i in range(120)),  # > 256 tokens
    *(
        f"Turn {i}: we talked about books, dogs and the trip to Lisbon." * (1 + i % 4)
        for i in range(30)
    ),
]


def test_the_export_runs_once_and_gives_sentence_transformers_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RIPPLEGRAPH_MODEL_CACHE", str(tmp_path / "cache"))
    embeddings = LocalEmbeddings("all-MiniLM-L6-v2")
    assert not embeddings.graph.exists()
    ours = np.array(embeddings.embed_documents(TEXTS))
    assert embeddings.graph.exists()
    assert [p.name for p in embeddings.graph.parent.iterdir()] == [embeddings.graph.name]
    reference = reference_model(embeddings).encode(TEXTS, normalize_embeddings=True)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines.min()
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    one = np.array(embeddings.embed_query(TEXTS[2]))
    assert float(one @ ours[2]) >= 0.99999  # alone or in a batch: the same vector

    # A new process reads the file and never imports the framework that exported it.
    probe = (
        "import json, sys\n"
        "from ripplegraph.agent.models.local_embeddings import LocalEmbeddings\n"
        f"v = LocalEmbeddings('all-MiniLM-L6-v2').embed_query({TEXTS[2]!r})\n"
        "print(json.dumps({'v': v, 'torch': 'torch' in sys.modules}))\n"
    )
    env = {**os.environ, "RIPPLEGRAPH_MODEL_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    fresh = json.loads(done.stdout)
    assert fresh["torch"] is False
    assert float(np.array(fresh["v"]) @ ours[2]) >= 0.99999


def test_an_unwritable_cache_is_named_in_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("RIPPLEGRAPH_MODEL_CACHE", str(blocker / "cache"))
    with pytest.raises(EmbeddingSetupError, match="RIPPLEGRAPH_MODEL_CACHE"):
        LocalEmbeddings("all-MiniLM-L6-v2").embed_query("hello")


def test_an_unknown_local_model_is_refused() -> None:
    with pytest.raises(EmbeddingSetupError, match="local:all-minilm-l6-v2"):
        LocalEmbeddings("all-mpnet-base-v2")
