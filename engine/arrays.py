"""Small array helpers shared across the engine.

``distinct`` exists because ``np.unique`` on large integer arrays takes a hash-based
path in numpy 2.3+ that is two orders of magnitude slower than sorting (15 s against
0.1 s for 10 M int64 values on this machine); sorting is what every caller needs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct"]


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a 1-D array."""
    s = np.sort(values)
    if s.size == 0:
        return s
    return s[np.concatenate([[True], s[1:] != s[:-1]])]
