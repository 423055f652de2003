"""Route computation: the output port(s) a head leaves by, in dimension order (X then Y, or
Y then X: the packet's ``PK_ROUTE``), and the output VCs its order may take. A multicast
router splits a head's range of destinations into branches, one per output port
(``_start_packet``); the unicast router keeps the one port in the VC (``_route_unicast``).
This and the traversal (``router._send_unicast``, ``router._send_multicast``) are where the
two routers differ in what they do."""

from __future__ import annotations

import numba
import numpy as np

from engine.simulate.kernel.base import _ix

# isort: off
from engine.simulate.records import (BR_HI, BR_LO, BR_OVC, BR_PK, BR_PORT, BR_SENT, BR_VAGR, FLIT,
    M_VAS, M_X, M_Y, NS_PORT, NS_X, NS_Y, N_BR, N_MISC, N_NS, N_OV, N_PK, N_VC, OV_OWNER, PK_HI,
    PK_LO, PK_ROUTE, VC_BRN, VC_DEST, VC_FROM, VC_HEAD, VC_OUT, VC_PK, VC_POPPED, VC_SA_T, VC_SENT,
    VC_STATE, VC_VA_T, V_VCALLOC,
)  # fmt: skip
# isort: on


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _dor_port(ns, d, x, y, yx):
    """The output port by which a router at (x, y) sends towards terminal d, in dimension
    order (X then Y, or Y then X when ``yx`` is 1)."""
    dx, dy = ns[_ix(d * N_NS + NS_X)], ns[_ix(d * N_NS + NS_Y)]
    # as arithmetic, not branches: where a packet turns is data a branch cannot predict, and
    # so is its order where packets take either (O1TURN)
    mx, my = np.int64(dx != x), np.int64(dy != y)
    px, py = np.int64(dx < x), 2 + np.int64(dy < y)  # W (1) or E (0); N (3) or S (2)
    local = ns[_ix(d * N_NS + NS_PORT)]
    x_first = mx * px + (1 - mx) * (my * py + (1 - my) * local)
    y_first = my * py + (1 - my) * (mx * px + (1 - mx) * local)
    return x_first + yx * (y_first - x_first)


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _vc_mask(cfg, yx, o):
    """The output VCs (bit v: VC v) of port o a packet of order ``yx`` may take: its order's
    class on a router link (``cfg.vmask_x``, ``cfg.vmask_y``), every VC into a core."""
    full = (np.int64(1) << cfg.v) - 1
    mask = cfg.vmask_x + np.int64(yx) * (cfg.vmask_y - cfg.vmask_x)  # (no branch: see _dor_port)
    return full + np.int64(o < 4) * (mask - full)


@numba.njit(cache=True, nogil=True, _nrt=False, forceinline=True, error_model="numpy")
def _start_packet(cfg, ns, st, pk, dest, rb, r, iv, t_from):
    """The front flit of input VC ``iv`` of router r (block ``rb``) is a head: split its
    destinations into branches (route); VC allocation may start at ``t_from + routing_delay``."""
    B, D = cfg.b, cfg.d  # noqa: N806
    vb = rb + cfg.ovc + iv * N_VC
    bb = rb + cfg.obr + iv * B * N_BR
    p = st[_ix(rb + cfg.obuf + iv * D + st[_ix(vb + VC_HEAD)])] // FLIT
    st[_ix(vb + VC_PK)] = p
    st[_ix(vb + VC_POPPED)] = 0
    x, y = st[_ix(rb + cfg.omisc + M_X)], st[_ix(rb + cfg.omisc + M_Y)]
    yx = pk[_ix(p * N_PK + PK_ROUTE)]
    nb = 0
    for k in range(pk[_ix(p * N_PK + PK_LO)], pk[_ix(p * N_PK + PK_HI)]):
        port = _dor_port(ns, dest[_ix(k)], x, y, yx)
        # a branch is a run of consecutive destinations that leave by the same port
        if nb > 0 and st[_ix(bb + (nb - 1) * N_BR + BR_PORT)] == port:
            st[_ix(bb + (nb - 1) * N_BR + BR_HI)] = k + 1
        else:
            e = bb + nb * N_BR
            st[_ix(e + BR_PORT)] = port
            st[_ix(e + BR_OVC)] = -1
            st[_ix(e + BR_SENT)] = 0
            st[_ix(e + BR_LO)] = k
            st[_ix(e + BR_HI)] = k + 1
            st[_ix(e + BR_PK)] = -1
            st[_ix(e + BR_VAGR)] = -1
            nb += 1
    st[_ix(vb + VC_BRN)] = nb
    st[_ix(vb + VC_STATE)] = V_VCALLOC
    st[_ix(vb + VC_FROM)] = t_from + cfg.rd
    st[_ix(vb + VC_VA_T)] = -1
    st[_ix(vb + VC_SA_T)] = -1


# ------------------------------------------------------------------ the unicast kernel
@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _route_unicast(cfg, ns, st, pk, dest, rb, iv, t_from, d):
    """The unicast kernel's ``_start_packet``: the head at the front of input VC ``iv`` (of
    the router at ``rb``), bound for terminal d (-1: its packet's), is routed; VC allocation
    may start at ``t_from + routing_delay``."""
    vb = rb + cfg.ovc + iv * N_VC
    p = st[_ix(rb + cfg.obuf + iv * cfg.d + st[_ix(vb + VC_HEAD)])] // FLIT
    if d < 0:
        d = dest[_ix(pk[_ix(p * N_PK + PK_LO)])]
    misc = rb + cfg.omisc
    x, y = st[_ix(misc + M_X)], st[_ix(misc + M_Y)]
    yx = pk[_ix(p * N_PK + PK_ROUTE)]
    o = _dor_port(ns, d, x, y, yx)
    st[_ix(vb + VC_PK)] = p
    st[_ix(vb + VC_DEST)] = d
    st[_ix(vb + VC_OUT)] = o
    st[_ix(misc + N_MISC + 2 * cfg.p * cfg.v + iv)] = _vc_mask(cfg, yx, o)
    st[_ix(vb + VC_SENT)] = 0
    st[_ix(vb + VC_STATE)] = V_VCALLOC
    st[_ix(vb + VC_FROM)] = t_from + cfg.rd
    st[_ix(misc + M_VAS)] |= np.int64(1) << iv


@numba.njit(cache=True, nogil=True, forceinline=True, error_model="numpy")
def _can_ask(cfg, st, o_ov, bb, nbr, V, yx):  # noqa: N803
    """Whether a routed head (branches at ``bb``, its packet's order ``yx``) may ask for
    output VCs: every port it still needs has a free one it may take. A multicast head that
    asked while one of its ports was wholly held would win VCs on its other ports only to
    give them back (it takes them in port order), and heads that can go would lose those
    allocations to it, round after round."""
    for b in range(nbr):
        e = bb + b * N_BR
        if st[_ix(e + BR_OVC)] >= 0:
            continue
        o = st[_ix(e + BR_PORT)]
        vm = _vc_mask(cfg, yx, o)
        free = False
        for ov in range(V):
            if (vm >> ov) & 1 and st[_ix(o_ov + (o * V + ov) * N_OV + OV_OWNER)] < 0:
                free = True
                break
        if not free:
            return False
    return True
