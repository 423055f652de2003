"""The simulator's records: how the cycle loop (``engine.simulate.kernel``) lays out its state.

State is flat. All of router ``r`` lives in one block of ``st`` (``r · cfg.rs`` on),
its records field-last (``M_*``: masks, position and stall counters first, then ``VC_*`` per
input VC, ``OV_*`` per output VC, ``BR_*`` per branch, ``PT_*`` per port, then buffers,
arrival cycles, credit rings, link and credit queues, allocator pointers and the busy list,
at the offsets ``layout`` gives); a terminal's state is one block of ``nd``, a packet one
row of ``pk``; ``cfg`` (a ``Config``) holds the run's scalars and those offsets, ``ctr`` its
counters (``C_*``).

Field names are indices: ``st[rb + cfg.ovc + iv * N_VC + VC_N]`` is the flit count of
input VC ``iv`` of the router whose block starts at ``rb``. The kernels are compiled with these
values as constants, and numba's cache checks only the source file of a kernel: after changing
a value here, touch ``kernel/loop.py`` (or run ``python -m engine.warm`` on a clean cache).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

RUNNING, DONE, FULL, DEADLOCK, IDLE_END = 0, 1, 2, 3, 4  # run() status
FLIT = 256  # flit code = packet id * FLIT + index in the packet (packets of up to 255 flits)
V_IDLE, V_VCALLOC, V_ACTIVE = 0, 1, 2
NEVER = 1 << 62
WHEEL = 64  # cycles ahead the timing wheel holds (a power of two)


class Config(NamedTuple):
    """A run's scalars and the offsets of its records, as the kernels read them (``cfg.p``):
    a tuple of integers, so numba passes it by value and reads a field as a register."""

    w: int  # one mesh's grid: w × h routers (``nr``: the routers of every parallel mesh)
    h: int
    p: int  # ports per router (4 + its cores)
    v: int  # VCs per port
    d: int  # flits per VC buffer
    b: int  # branches per packet at a router (1: unicast)
    rd: int  # routing, VC allocation, switch allocation, switch traversal, credit delays
    vd: int
    sd: int
    st_delay: int
    cd: int
    alloc: int  # 0 iSLIP, 1 separable input-first round robin
    iters: int  # allocator iterations
    routing: int  # the routing's kernel id (``engine.hardware.routing``, ``Routing.kernel``): a
    # synthetic packet's dimension order (``PK_ROUTE``) is X first (0), Y first (1), or either (2)
    vmask_x: int  # the output VCs (bit masks) an X-first and a Y-first packet may take on a
    vmask_y: int  # router link (``Routing.vc_masks``; every VC into a core)
    sink: int  # 0: a terminal takes a flit at once; 1: a core's server, packet by packet
    watchdog: int  # cycles without a moving flit that make a deadlock
    pattern: int  # the synthetic pattern's kind (``patterns.Pattern``) and whether its rows
    shared: int  # of destinations are shared
    nodes: int  # terminals
    ahead: int  # cycles a router may run ahead (``machine.run_ahead``)
    nr: int
    sqs: int  # parallel meshes with servers: the server queue's slots and their capacity
    sqc: int
    unicast: int  # 1: the unicast kernel (``kernel.router._cycle_unicast``)
    pool: int  # 1: packet records are recycled (synthetic sources; see ``_retire``)
    # a router's block: its size, then where each of its records starts (``layout``)
    rs: int
    omisc: int
    ovc: int
    oov: int
    obr: int
    opt: int
    obuf: int
    obat: int
    ocr: int
    olq: int
    ocq: int
    ova: int
    oact: int
    ql: int  # link queue and credit queue entries per port
    qc: int
    # a terminal's block: its size, then where its VCs and its credit queue start
    nds: int
    onv: int
    oncq: int


# tp[(r * P + o) * N_T + f]: per router output port, static
T_NBR, T_OUT_NODE, T_LINK, T_LAT, T_SER = range(5)
N_T = 5
# ns[n * N_NS + f]: per terminal, static
NS_ROUTER, NS_PORT, NS_X, NS_Y, NS_INJ_LAT = range(5)
N_NS = 5
# a router's block: per input VC (i * V + v)
# (VC_OUT, VC_OVC, VC_SENT and VC_DEST are the unicast kernel's: its packet's port, output
# VC, flits sent and terminal; the fields a router cycle reads come first, in one cache line)
(VC_STATE, VC_FROM, VC_HEAD, VC_N, VC_PK, VC_OUT, VC_OVC, VC_SENT, VC_BLOCKED, VC_BLOCK_WHY,
 VC_DEST, VC_POPPED, VC_BRN, VC_VA_T, VC_SA_T, VC_SA_GR) = range(16)  # fmt: skip
N_VC = 16
# … per output VC (o * V + v)
# (the unicast kernel keeps the credits on their way back to an output VC in a ring of D
# cycles at ``cfg.ocr``, its head and length in OV_CR_H and OV_CR_N, instead of the port's
# credit queue)
OV_OWNER, OV_CREDITS, OV_CR_H, OV_CR_N = range(4)
N_OV = 4
# … per branch of an input VC's packet ((i * V + v) * B + b)
BR_PORT, BR_OVC, BR_SENT, BR_LO, BR_HI, BR_PK, BR_VAGR = range(7)
N_BR = 7
# … per port
# (PT_SEEN: the unicast kernel's first cycle whose occupancy of the input port its trace
# has not seen: its flits are in their buffers before they arrive, ``kernel.stats._seen``)
PT_OUT_FREE, PT_LQ_H, PT_LQ_N, PT_CQ_H, PT_CQ_N, PT_SW_RR, PT_SW_G, PT_SW_A, PT_SEEN = range(9)
N_PT = 9
# … link queue entries (flits on their way to an input), credit queue entries
LQ_F, LQ_V, LQ_T = range(3)
N_LQ = 3
CQ_V, CQ_T = range(2)
N_CQ = 2
# … misc: busy VCs, bit masks of the ports with link / credit queue entries, the router's
# x and y, the unicast kernel's (``_router(True, …)``) busy input VCs and held output VCs as
# bit masks (bit i · V + v), the trace window of the router's last cycle (its buffers' are
# in it), stall cycles; then, per input VC, its port and its VC (no divisions in the loop),
# and (the unicast kernel's) the output VCs its packet may take at its route's port (a bit
# mask, ``_vc_mask``)
M_BUSY, M_LQ, M_CQ, M_X, M_Y, M_VCS, M_HELD, M_VAS, M_CWAIT, M_WIN, M_STALL = range(11)
# the stall counters from M_STALL on, one per cause (``Machine.stalls`` names them so; a new
# cause goes at the end here, with its wait group in W_OF_STALL and its field in the tracked
# packet's hop (H_*, in this order from H_VC_BUSY), and is counted by the one router stage that
# sees it: ``kernel.stats``)
STALLS = ("vc_busy", "vc_lost", "no_credit", "switch_lost")
S_VC_BUSY, S_VC_LOST, S_NO_CREDIT, S_SW_LOST = range(len(STALLS))
# a trace's waits per window and router (``win_wait[w, r * N_WAIT + W_*]``): cycles a VC
# waited for an output VC (every one held, or an allocation lost), for a downstream credit
# (back-pressure), or for the switch (an allocation lost)
W_VC, W_CREDIT, W_SWITCH = range(3)
N_WAIT = 3
W_OF_STALL = (W_VC, W_VC, W_CREDIT, W_SWITCH)  # the S_* order
N_MISC = M_STALL + len(STALLS)  # then, per input VC, its port, its VC, its output VC mask
# a terminal's block: fields, then per VC (NV_*), then its credit queue (CQ_*)
(ND_QHEAD, ND_QTAIL, ND_SENT, ND_LAST, ND_VC, ND_CQ_H, ND_CQ_N, ND_FREE, ND_ACC,
 ND_CREATED, ND_ACTIVE) = range(11)  # fmt: skip
N_ND = 11
NV_CRED, NV_OWNER = range(2)
N_NV = 2
# pk[p * N_PK + f]: per packet record
(PK_NEXT, PK_SRC, PK_LO, PK_HI, PK_SIZE, PK_CTIME, PK_ITIME, PK_ATIME, PK_HOPS, PK_MEAS,
 PK_DONE, PK_PARENT, PK_GROUP, PK_ROUTE, PK_ID) = range(15)  # fmt: skip
N_PK = 15  # (PK_ROUTE: its dimension order, 0 X first, 1 Y first; a branch keeps its packet's)
# (PK_ID: the packet's number in the order the sources created it; with recycled records
# (``cfg.pool``) a record holds one packet after another, and the number names the packet)
# grp[f, g]
G_OPEN, G_LEFT, G_DONE = range(3)
# ctr
(C_T, C_NPK, C_INFLIGHT, C_PROGRESS, C_MEASURE_FROM, C_MEASURE_TO, C_DELIVERED, C_LAST_DONE,
 C_OPEN_GROUP, C_REL_PTR, C_WINDOW, C_FHEAP_N, C_GHEAP_N, C_NSRC, C_GEN_P, C_STAMP,
 C_VISITS, C_TRACK, C_TRACK_K, C_TRACK_N, C_SQN, C_GCAL_N, C_NFREE, C_TRACK_ID,
 C_LOG_N) = range(25)  # fmt: skip
N_CTR = 25
# recycled packet records (``cfg.pool``): ``pk_free[:ctr[C_NFREE]]`` are the records not in use; a
# packet whose tail reached its terminal is written to ``pk_log`` as its ``ctr[C_LOG_N]``-th
# row (L_* fields, column by column: field f of row k at ``f · rows + k``) and its record
# freed (``_retire``); the caller reads the log and empties it (the statistics stream: a run
# keeps only the packets in flight). C_TRACK_ID: the number (PK_ID) of the packet to track,
# whose record is known once it is created.
(L_ID, L_SRC, L_DST, L_CTIME, L_ITIME, L_ATIME, L_HOPS, L_MEAS, L_SIZE,
 L_ROUTE) = range(10)  # fmt: skip
N_LOG = 10
# the synthetic sources' next packets: terminal n due at cycle c within GCAL cycles is bit n
# of gcal[c % GCAL] (C_GCAL_N of them), a later one in the heap gheap
GCAL = 256
# sq: tails waiting for their core's server (parallel meshes, cores as servers): ``cfg.sqs``
# slots, one per cycle in which they are served, each a count then ``cfg.sqc`` entries (SQ_*)
SQ_ARR, SQ_P, SQ_R, SQ_O, SQ_OV = range(5)
N_SQ = 5
# the tracked packet's hops, logged in ctr after N_CTR (H_* per hop): the router, the input
# port its head came in by, the cycle the head arrived, the cycle its route was ready (VC
# allocation may start), the cycle it won an output VC, the output port, the cycles its head
# and its tail left, then what it waited for there: cycles every output VC was held, VC
# allocations lost, cycles without a credit, switch allocations lost (the S_* order)
(H_ROUTER, H_IN, H_ARRIVE, H_READY, H_VA, H_OUT, H_HEAD, H_TAIL, H_VC_BUSY, H_VC_LOST,
 H_NO_CREDIT, H_SW_LOST) = range(12)  # fmt: skip
N_HOP = 12


class Wheel(NamedTuple):
    """When each router is due (``kernel.base._schedule``): ``due[r]`` the next cycle router r has
    something to do (``NEVER``: none); the routers due within ``WHEEL`` cycles on a timing
    wheel (``wheel[s, :wn[s]]``: those due in cycle s modulo ``WHEEL``, stale entries
    included), later ones in a heap (``fheap``, its priorities ``fpri``, positions
    ``fpos``); ``mark``: stamps that keep a router on a full slot once."""

    due: np.ndarray
    wheel: np.ndarray
    wn: np.ndarray
    fheap: np.ndarray
    fpri: np.ndarray
    fpos: np.ndarray
    mark: np.ndarray


class Scratch(NamedTuple):
    """A router's scratch arrays (``kernel.workspace``): the VC allocation's and the switch
    allocation's requests, the matches, the allocators' candidates, the VC asking for each
    (input, output) of the switch and its branch, and a copy of the busy VCs."""

    req_in: np.ndarray
    req_out: np.ndarray
    sreq_in: np.ndarray
    sreq_out: np.ndarray
    m_in: np.ndarray
    m_out: np.ndarray
    cand: np.ndarray
    sw_vc: np.ndarray
    sw_br: np.ndarray
    cur: np.ndarray
    va_vcs: np.ndarray  # (the unicast router) per output port, the VCs asking for its VCs


class Net(NamedTuple):
    """The mesh, static during a run: per router output port (``tp``, ``T_*``) and per
    terminal (``ns``, ``NS_*``)."""

    tp: np.ndarray
    ns: np.ndarray


class State(NamedTuple):
    """What a run changes: routers (``st``), terminals (``nd``), packet records (``pk``) and
    their destinations (``dest``, service cycles ``dsvc``), a mapping's groups (``grp``), the
    servers' queue (``sq``), the free records and the log of retired packets (``free``,
    ``log``, with ``cfg.pool``), and the counters (``ctr``, ``C_*``)."""

    st: np.ndarray
    nd: np.ndarray
    pk: np.ndarray
    dest: np.ndarray
    dsvc: np.ndarray
    grp: np.ndarray
    sq: np.ndarray
    free: np.ndarray
    log: np.ndarray
    ctr: np.ndarray


class Trace(NamedTuple):
    """What a run counts for the links and, traced, per window: flits per link, then per
    window the flits per link, the most flits per input port and the waits per router."""

    link_flits: np.ndarray
    win_link: np.ndarray
    win_occ: np.ndarray
    win_wait: np.ndarray


class Sources(NamedTuple):
    """Where packets come from: a mapping's release order (``rel_order``, ``rel_off``,
    ``grp_ptr``), the synthetic sources' random state, their next packets (a calendar
    ``gcal`` and a heap ``gheap``/``gpri``/``gpos``), the terminals with a queue
    (``src_list``) and the pattern's tables (``patterns.Pattern``)."""

    rel_order: np.ndarray
    rel_off: np.ndarray
    grp_ptr: np.ndarray
    rng: np.ndarray
    gheap: np.ndarray
    gpri: np.ndarray
    gpos: np.ndarray
    gcal: np.ndarray
    src_list: np.ndarray
    perm: np.ndarray
    row_ptr: np.ndarray
    dest_tab: np.ndarray
    cum: np.ndarray


class Span(NamedTuple):
    """One call of ``kernel.run``: up to cycle ``t_end`` (exclusive), the synthetic sources'
    packets per terminal and cycle and their size in flits, the pattern's fraction, whether
    the packets created now are measured, cycles per trace window (0: none), and whether to
    stop once nothing is queued, in flight or to release."""

    t_end: int
    inject_p: float
    size: int
    fraction: float
    measured: int
    window: int
    stop_when_idle: bool


def layout(P: int, V: int, B: int, D: int, ql: int, qc: int) -> dict:  # noqa: N803
    """Offsets of the records in a router's block and a terminal's block (``Config`` fields)."""
    off, at = {}, 0
    for key, size in (
        ("omisc", N_MISC + 3 * P * V),  # first: a flit put into the router reads it
        ("ovc", P * V * N_VC),
        ("oov", P * V * N_OV),
        ("obr", P * V * B * N_BR),
        ("opt", P * N_PT),
        ("obuf", P * V * D),
        ("obat", P * V * D),  # the unicast kernel's: the cycle each buffered flit arrives
        ("ocr", P * V * D),  # … and the cycles its output VCs' credits come back
        ("olq", P * ql * N_LQ),
        ("ocq", P * qc * N_CQ),
        ("ova", P * V + P * V * B),  # VC allocator: grant pointers, then accept pointers
        ("oact", 2 * P * V),  # the busy VCs, then each VC's place in that list
    ):
        off[key] = at
        at += size
    off["rs"] = at
    off["onv"] = N_ND
    off["oncq"] = N_ND + V * N_NV
    off["nds"] = N_ND + V * N_NV + qc * N_CQ
    off["ql"], off["qc"] = ql, qc
    return off
