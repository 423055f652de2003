"""Hyperedge-overlap partitioning (SNN hypergraphs §IV-A2, Alg. 1).

Partitions are filled one after the other by sweeping h-edges: each visited h-edge
lays its unassigned destinations (and its source when that is an input neuron) into
the current partition, the node adding the fewest new inbound h-edges first (ties: the
largest inbound set, then the lower id). The next h-edge is the unseen one of highest
``w(e) · occurrences(e) / remaining(e)`` in an addressable priority queue flushed at
every new partition, or, when the queue is empty, the largest unseen h-edge.

Line 21's argmin is exact, not approximated: when an h-edge is visited each of its
candidates gets ``|inbound(m) \\ apc|`` once (O(|inbound(m)|)) and enters a small
addressable heap; whenever an axon joins the partition's inbound set, the candidates
that receive it lose one — found through the axon's destinations or by a binary search
in each remaining candidate's sorted inbound list, whichever is cheaper. Two readings
of Alg. 1: C_spc is checked against the node's inbound synapses (line 28 adds 1 to
spc, which would make C_spc a second neuron limit); an h-edge whose pins are all
assigned counts as seen at once (its visit assigns nothing; line 32 would divide by
zero). Cost: O(e·d·log d) for the queue, plus the candidate updates, at most
O(Σ_a λ(a) · min(d, c·log h)) for c candidates.
"""

from __future__ import annotations

import numba
import numpy as np

from engine.hardware import Hardware
from engine.heap import pop, push, sift_up
from engine.mapping.assignment import Partition
from engine.mapping.partition import register
from engine.mapping.partition.limits import checked_partition, hypergraph_under_limits
from engine.model.network import Network
from engine.progress import report

__all__ = ["overlap", "sweep"]

# the sweep's scalars between calls of its kernel
S_HEAP, S_SEEN, S_CAND, S_PART, S_NPC, S_SPC, S_APC, S_NEXT = range(8)
N_SCALARS = 8
VISITS = 1 << 18  # h-edges a call of the kernel visits (MobileNet V1: ~26 calls)


@register("overlap")
def overlap(network: Network, hardware: Hardware, *, rng=None) -> Partition:
    """SNN hypergraphs Alg. 1: sweep h-edges by overlap with the current partition.

    Deterministic (``rng`` is unused): ties go to the lower h-edge or node id.

    Examples
    --------
    >>> from engine.specs import load_network_spec
    >>> from engine.hardware import load_hardware
    >>> net, hw = load_network_spec("rand:n=2000,card=32"), load_hardware("hypergraph-small")
    >>> overlap(net, hw).n_parts
    2
    """
    cap, inc = hypergraph_under_limits(network, hardware)
    pins = np.diff(inc.out_ptr) + 1  # size(e) = |D| + 1 (line 6)
    by_size = np.argsort(-pins, kind="stable").astype(np.int64)  # line 8
    part = sweep(inc, network.rate, by_size, (cap.neurons, cap.axons, cap.synapses))
    return checked_partition(network, hardware, part, "overlap")


def sweep(inc, rate, by_size, caps, visits: int = VISITS) -> np.ndarray:
    """Alg. 1's sweep over the h-edges of ``inc`` (``hypergraph_under_limits``), ``visits``
    h-edges per call of the kernel, reporting how many are seen after each (``report``):
    the same partition whatever ``visits``. Returns each neuron's partition, or, when a
    neuron cannot fit an empty partition, ``-(neuron + 1)`` in the first entry."""
    if visits < 1:
        raise ValueError(f"the sweep visits at least one h-edge a call, not {visits}")
    n = inc.out_ptr.size - 1
    state = _start(inc.out_ptr, inc.out_idx)
    scalars = np.zeros(N_SCALARS, dtype=np.int64)
    while scalars[S_SEEN] < n:
        if not _sweep(inc.out_ptr, inc.out_idx, inc.in_ptr, inc.in_idx, inc.synapses, rate,
                      by_size, *caps, *state, scalars, visits):  # fmt: skip
            break  # a neuron that fits no partition: the caller's check names it
        report(scalars[S_SEEN], n)
    return state[0]


@numba.njit(cache=True, nogil=True)
def _start(out_ptr, out_idx):
    """The sweep's state before the first h-edge: every array ``_sweep`` carries on."""
    n = out_ptr.size - 1
    part = np.full(n, -1, dtype=np.int64)
    self_loop = np.zeros(n, dtype=np.bool_)
    remaining = np.empty(n, dtype=np.int64)  # size(e): pins not yet assigned
    for e in range(n):
        for k in range(out_ptr[e], out_ptr[e + 1]):
            if out_idx[k] == e:
                self_loop[e] = True
        remaining[e] = out_ptr[e + 1] - out_ptr[e] + (0 if self_loop[e] else 1)
    # the h-edge queue: max-heap on w(e)·occurrences(e)/remaining(e), ties to the lower id
    occ = np.zeros(n, dtype=np.int64)
    pri = np.zeros(n, dtype=np.float64)
    heap = np.empty(n, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=np.bool_)
    # the candidates of the visited h-edge: max-heap on -(new·(n+1) + n - |inbound|)
    new = np.zeros(n, dtype=np.int64)  # |inbound(m) \ apc| of each candidate m
    c_pri = np.zeros(n, dtype=np.float64)
    c_heap = np.empty(n, dtype=np.int64)
    c_pos = np.full(n, -1, dtype=np.int64)
    spare = np.empty(n, dtype=np.int64)
    in_apc = np.full(n, -1, dtype=np.int64)  # partition whose inbound set holds the axon
    return (part, self_loop, remaining, occ, pri, heap, pos, seen, new, c_pri, c_heap, c_pos,
            spare, in_apc)  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _sweep(out_ptr, out_idx, in_ptr, in_idx, synapses, rate, by_size, c_npc, c_apc, c_spc, part,
           self_loop, remaining, occ, pri, heap, pos, seen, new, c_pri, c_heap, c_pos, spare,
           in_apc, scalars, visits):  # fmt: skip
    """Visit up to ``visits`` h-edges from the state ``_start`` made (``scalars``: the
    S_* counters). False when a neuron fits no empty partition (``part[0]`` says which)."""
    n = out_ptr.size - 1
    in_count = in_ptr[1:] - in_ptr[:-1]
    log_in = 1 + int(np.log2(max(1, in_count.max())))  # steps of a binary search
    h_size, n_seen, c_size = scalars[S_HEAP], scalars[S_SEEN], scalars[S_CAND]
    p, npc, spc, apc = scalars[S_PART], scalars[S_NPC], scalars[S_SPC], scalars[S_APC]
    nxt = scalars[S_NEXT]  # next in by_size
    visited = 0
    while n_seen < n and visited < visits:
        visited += 1
        e = -1
        while h_size > 0:  # pop, skipping h-edges that became seen while queued
            top = heap[0]
            h_size = pop(heap, pri, pos, h_size)
            if not seen[top]:
                e = top
                break
        if e < 0:
            while seen[by_size[nxt]]:
                nxt += 1
            e = by_size[nxt]
        seen[e] = True
        n_seen += 1
        for k in range(out_ptr[e], out_ptr[e + 1] + 1):  # line 18–19: the candidates
            m = out_idx[k] if k < out_ptr[e + 1] else e
            if part[m] >= 0 or c_pos[m] >= 0 or (k == out_ptr[e + 1] and in_count[e] > 0):
                continue
            cnt = 0
            for j in range(in_ptr[m], in_ptr[m + 1]):
                if in_apc[in_idx[j]] != p:
                    cnt += 1
            new[m] = cnt
            c_pri[m] = -(cnt * (n + 1.0) + (n - in_count[m]))
            c_size = push(c_heap, c_pri, c_pos, c_size, m)
        while c_size > 0:
            m = c_heap[0]  # line 21: fewest new axons, then the largest inbound set
            if npc == c_npc or spc + synapses[m] > c_spc or apc + new[m] > c_apc:
                if npc == 0:  # cannot happen after require_each_neuron_fits
                    part[0] = -(m + 1)
                    return False
                for i in range(h_size):  # line 24: flush the queue
                    pos[heap[i]] = -1
                    occ[heap[i]] = 0
                h_size = 0
                p += 1
                npc, spc, apc = 0, 0, 0
                for i in range(c_size):  # the fresh partition's counts: whole inbound sets
                    spare[i] = c_heap[i]
                    c_pos[c_heap[i]] = -1
                n_cand = c_size
                c_size = 0
                for i in range(n_cand):
                    x = spare[i]
                    new[x] = in_count[x]
                    c_pri[x] = -(in_count[x] * (n + 1.0) + (n - in_count[x]))
                    c_size = push(c_heap, c_pri, c_pos, c_size, x)
                continue
            c_size = pop(c_heap, c_pri, c_pos, c_size)
            part[m] = p
            npc += 1
            spc += synapses[m]
            apc += new[m]
            for j in range(in_ptr[m], in_ptr[m + 1]):
                a = in_idx[j]
                if in_apc[a] == p:
                    continue
                in_apc[a] = p
                if c_size == 0:
                    continue
                # the candidates that receive a: through a's destinations or by a binary
                # search in each candidate's sorted inbound list, whichever is cheaper
                if c_size * log_in < out_ptr[a + 1] - out_ptr[a]:
                    spare[:c_size] = c_heap[:c_size]
                    for i in range(c_size):
                        x = spare[i]
                        at = in_ptr[x] + np.searchsorted(in_idx[in_ptr[x] : in_ptr[x + 1]], a)
                        if at < in_ptr[x + 1] and in_idx[at] == a:
                            _one_less(x, new, c_heap, c_pri, c_pos, n)
                else:
                    for i in range(out_ptr[a], out_ptr[a + 1]):
                        if c_pos[out_idx[i]] >= 0:
                            _one_less(out_idx[i], new, c_heap, c_pri, c_pos, n)
            for j in range(in_ptr[m], in_ptr[m + 1] + 1):  # line 31–33
                c = in_idx[j] if j < in_ptr[m + 1] else m
                if seen[c] or (j == in_ptr[m + 1] and self_loop[m]):
                    continue
                occ[c] += 1
                remaining[c] -= 1
                if remaining[c] == 0:  # every pin assigned: its visit would be a no-op
                    seen[c] = True
                    n_seen += 1
                    continue
                pri[c] = rate[c] * occ[c] / remaining[c]
                if pos[c] < 0:
                    h_size = push(heap, pri, pos, h_size, c)
                else:
                    sift_up(heap, pri, pos, pos[c])
    scalars[S_HEAP], scalars[S_SEEN], scalars[S_CAND] = h_size, n_seen, c_size
    scalars[S_PART], scalars[S_NPC], scalars[S_SPC], scalars[S_APC] = p, npc, spc, apc
    scalars[S_NEXT] = nxt
    return True


@numba.njit(cache=True, nogil=True)
def _one_less(x, new, c_heap, c_pri, c_pos, n):
    """Candidate x has one new inbound axon fewer: it moves up the candidate heap."""
    new[x] -= 1
    c_pri[x] += n + 1.0
    sift_up(c_heap, c_pri, c_pos, c_pos[x])
