"""Helpers shared by the generators: CSR assembly from (source, destination) lists."""

from __future__ import annotations

import numpy as np

from engine.errors import InvalidNetworkError


def csr_from_pairs(n: int, src: np.ndarray, dst: np.ndarray):
    """CSR ``(indptr, indices)`` of the synapses ``src[i] -> dst[i]``, rows sorted."""
    order = np.lexsort((dst, src))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return indptr.astype(np.int64), dst[order].astype(np.int32)


def require(condition: bool, message: str):
    if not condition:
        raise InvalidNetworkError(message)
