"""What every stage of the kernel uses: unsigned indices and the wheel of due routers."""

from __future__ import annotations

import numba
import numpy as np

from engine.heap import update

# isort: off
from engine.simulate.records import (C_FHEAP_N, C_STAMP, C_T, WHEEL,
)  # fmt: skip
# isort: on


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _ix(i):
    """An index into the kernel's arrays, as unsigned: numba then skips the wrap-around of
    negative indices (a compare, a select and the array's length kept live at every access;
    the kernel never indexes from the end), which makes the loop about 1.25× faster."""
    return np.uint64(i)


# ------------------------------------------------------------------ scheduling
@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _schedule(dw, ctr, r, when):
    """Router r has something due at cycle ``when`` (≥ now); keeps the earliest due time.

    A router due within ``WHEEL`` cycles goes on the wheel's slot for that cycle, a later
    one into the heap; an entry whose cycle is no longer the router's due time is stale and
    skipped (a router moved earlier leaves its old entry behind).
    """
    due, wheel, wn, fheap, fpri, fpos, mark = dw
    if when >= due[_ix(r)]:
        return
    due[_ix(r)] = when
    if when - ctr[C_T] < WHEEL:
        s = when & (WHEEL - 1)
        cap = wheel.shape[1]
        k = wn[_ix(s)]
        if k == cap:  # full of stale entries: keep each router due at ``when`` once
            ctr[C_STAMP] += 1
            stamp = ctr[C_STAMP]
            k = 0
            for j in range(cap):
                e = wheel[_ix(s), _ix(j)]
                if due[_ix(e)] == when and mark[_ix(e)] != stamp:
                    mark[_ix(e)] = stamp
                    wheel[_ix(s), _ix(k)] = e
                    k += 1
        wheel[_ix(s), _ix(k)] = r
        wn[_ix(s)] = k + 1
    else:
        ctr[C_FHEAP_N] = update(fheap, fpri, fpos, ctr[C_FHEAP_N], r, -float(when))


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _next(k, size):
    """``(k + 1) % size`` for 0 ≤ k < size, without a division (the loops avoid them)."""
    return 0 if k + 1 == size else k + 1
