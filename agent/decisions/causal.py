"""Fact clusters and PMI-filtered causal edges (ActMem B–C).

Clustering is incremental: a new memory joins the cluster whose centroid is closest if the
cosine is at least τ, else it starts a new cluster. Causal pairs are proposed by the LLM
within a cluster and kept only when the antecedent makes the consequent more likely.

That is pointwise mutual information measured with the model's own token
log-probabilities:

    PMI = [log p(effect | "cause. As a result,") − log p(effect | "As a result,")] / n_tokens

The log-probabilities of given text need an OpenAI-compatible ``/v1/completions`` endpoint
that echoes the prompt with ``logprobs``. vLLM and llama.cpp's server do; OpenAI's hosted
chat models do not. Where no endpoint does, causal edges stay off and the trace says why.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ripplegraph.agent.errors import ModelUnavailable
from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.models.llm import describe, estimate_tokens
from ripplegraph.agent.spend import Spend
from ripplegraph.agent.store import MemoryStore

_log = logging.getLogger(__name__)

_ANTECEDENT = "{cause} As a result, "
_BASELINE = "As a result, "


def assign_clusters(
    store: MemoryStore, namespace: str, ids: Sequence[str], threshold: float
) -> set[int]:
    """Put each new memory into its nearest cluster (cosine ≥ τ) or a new one; touched ids."""
    clusters = store.clusters(namespace)
    vectors = store.embeddings(namespace, ids)
    members: dict[str, int] = {}
    touched: set[int] = set()
    for mid in ids:
        vector = vectors.get(mid)
        if vector is None:
            continue
        best, similarity = None, -1.0
        for cid, (total, _) in clusters.items():
            norm = float(np.linalg.norm(total))
            cosine = float(total @ vector) / norm if norm else -1.0
            if cosine > similarity:
                best, similarity = cid, cosine
        if best is None or similarity < threshold:
            best = max(clusters, default=-1) + 1
            clusters[best] = (np.zeros_like(vector), 0)
        total, size = clusters[best]
        clusters[best] = (total + vector, size + 1)
        members[mid] = best
        touched.add(best)
    store.assign_clusters(namespace, members, {cid: clusters[cid] for cid in touched})
    return touched


@dataclass
class PMIScorer:
    """PMI of cause → effect from echoed prompt log-probabilities at an OpenAI-compatible URL."""

    base_url: str
    model: str

    def __post_init__(self) -> None:
        import openai  # only a deployment that scores causes pays for the SDK's import

        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
            max_retries=1,
            timeout=30,
        )

    def _continuation_logprob(self, choice: object, prefix_length: int) -> tuple[float, int]:
        logprobs = getattr(choice, "logprobs", None)
        offsets = getattr(logprobs, "text_offset", None)
        values = getattr(logprobs, "token_logprobs", None)
        if not offsets or not values:
            raise ValueError("the endpoint returned no prompt log-probabilities")
        picked = [
            float(v)
            for offset, v in zip(offsets, values, strict=False)
            if offset >= prefix_length and v is not None
        ]
        if not picked:
            raise ValueError("no log-probabilities for the consequent")
        return sum(picked), len(picked)

    def pmi(self, cause: MemoryUnit, effect: MemoryUnit) -> float:
        """Per-token PMI of the effect given the cause (one request, two prompts).

        Raises ``ModelUnavailable`` when the endpoint fails or gives no log-probabilities.
        """
        import openai

        conditioned = _ANTECEDENT.format(cause=cause.text.rstrip(". ") + ".")
        try:
            response = self._client.completions.create(
                model=self.model,
                prompt=[conditioned + effect.text, _BASELINE + effect.text],
                max_tokens=1,
                echo=True,
                logprobs=0,
                temperature=0,
            )
            with_cause, n = self._continuation_logprob(response.choices[0], len(conditioned))
            alone, m = self._continuation_logprob(response.choices[1], len(_BASELINE))
        except (openai.OpenAIError, ValueError) as error:
            _log.warning("PMI scoring failed: %s: %s", describe(error), error)
            raise ModelUnavailable(f"PMI unavailable ({describe(error)})") from error
        return with_cause / n - alone / m

    @staticmethod
    def cost(cause: MemoryUnit, effect: MemoryUnit) -> Spend:
        """One scoring: one call; both prompts carry the effect, one the cause."""
        return Spend(calls=1, tokens=2 * estimate_tokens(cause.text + effect.text))
