"""Retrieval metrics and latency summaries shared by the benchmarks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

KS = (5, 10, 20, 30)


def recall_at(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold items among the top ``k``."""
    wanted = set(gold)
    return len(wanted & set(retrieved[:k])) / len(wanted) if wanted else 0.0


def all_at(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1 when every gold item is in the top ``k``, else 0."""
    wanted = set(gold)
    return float(bool(wanted) and wanted <= set(retrieved[:k]))


def hit_at(retrieved: Sequence[str], gold: str, k: int) -> float:
    """1 when the single gold item is in the top ``k``."""
    return float(gold in retrieved[:k])


def percentiles(milliseconds: Sequence[float]) -> dict[str, float]:
    """Median and 95th percentile, rounded to 0.1 ms."""
    if not milliseconds:
        return {"p50": 0.0, "p95": 0.0}
    return {
        "p50": round(float(np.percentile(milliseconds, 50)), 1),
        "p95": round(float(np.percentile(milliseconds, 95)), 1),
    }


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean rounded to 4 places (0 for no values)."""
    return round(float(np.mean(values)), 4) if len(values) else 0.0
