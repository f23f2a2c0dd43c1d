"""The best k of an array of scores, the same under any numpy.

``np.argpartition`` leaves which of several equal scores at the k-th place it keeps to its
selection algorithm, which numpy is free to change: a search cut there would return a
different memory for a tie under another numpy.  Here ties always go to the lower index.
"""

from __future__ import annotations

import numpy as np


def best(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the ``k`` highest scores, best first; equal scores in index order."""
    count = len(scores)
    k = min(k, count)
    if k <= 0:
        return []
    if k == count:
        chosen = np.arange(count)
    else:
        kth = np.partition(scores, count - k)[count - k]  # the k-th highest value, exactly
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)[: k - len(above)]
        chosen = np.concatenate([above, tied])
    return sorted(chosen.tolist(), key=lambda i: (-scores[i], i))
