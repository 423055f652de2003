"""Structured projections: a convolution's synapses described by its kernel and geometry.

A 64-channel 3×3 convolution on a 128×128 input has 6·10⁸ synapses; listed one by one
(CSR) they take gigabytes, yet everything a mapping needs of them depends on the kernel,
the geometry and where the neurons sit. A ``ConvProjection`` keeps the description —
source and target populations, their (C, H, W) shapes, a weight of shape
(C_out, C_in/groups, KH, KW), stride, padding, dilation, groups — and answers from it:

* ``n_synapses``: one per nonzero weight of the expanded projection, in closed form
  (per kernel tap, its nonzero channel pairs times the output positions whose input lies
  inside the input);
* ``counts(part)``: for a split of the target population into cores (any split, given
  neuron by neuron), every (source neuron, core, synapses) triple — the rows of the
  synapse-count matrix the partition graph is built from (distinct inbound axons per core,
  synapses per core, fan-out of a source neuron to cores, messages per core pair). It works
  core by core on the core's bounding box (one numba kernel): at each position, the core's
  runs of output channels there give a (C_in × taps) count matrix from cumulative kernel
  counts, each tap's counts are laid over the input window at the tap's offset, and the
  window's nonzero cells are the core's axons. The work is the cores' windows times the
  kernel, never the synapses;
* ``expand()``: the explicit synapses, for small layers or when asked.

A pooling after a convolution is part of the same projection (``then_pool``): a pool of
window P and stride t after a conv of kernel K, stride s and dilation d is a conv of
kernel (P−1)·s + (K−1)·d + 1, stride s·t and dilation 1 whose weight at offset o sums the
conv's weights at every (p, k) with p·s + k·d = o — exact when the pool has no padding
(its window then never leaves the conv's output). A pool alone is a depthwise conv of ones.

Local neuron indices are C-order over the population's shape (channel, row, column), as
NIR and PyTorch flatten them; a 1-d convolution is a 2-d one with one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numba
import numpy as np

from engine import host
from engine.errors import CapacityError, InvalidNetworkError

__all__ = ["ConvProjection", "valid_positions"]


COUNT_BYTES = 3 * 8  # a (source, core, synapses) triple of int64, one per input-window cell


def _check_memory(p: ConvProjection, cells: int, cores: int) -> None:
    """``CapacityError`` before ``_core_counts`` allocates its triples, when the input windows
    of the cores' bounding boxes (``cells``) need more than this machine has available."""
    need, free = cells * COUNT_BYTES, host.available_memory()
    if need > free:
        raise CapacityError(
            f"convolution {p.source}->{p.target}: its {cores:,} cores' bounding boxes cover "
            f"{cells:,} input cells, so counting their synapses needs {need / 2**30:.1f} GiB, "
            f"more than the {free / 2**30:.1f} GiB available: the partition scatters each "
            "core's neurons over the feature map. Use a partitioner that keeps a core's neurons "
            "together (overlap, sequential-ordered, or a layer partition: --partition min)"
        )


@numba.njit(cache=True, nogil=True)
def _core_counts(grid, cores, box, cum, taps, ci, hi, wi, sy, sx, py, px, dy, dx, kw, cap):
    """``ConvProjection.counts``'s work, core by core over each core's bounding box ``box``
    (c0, c1, y0, y1, x0, x1): per position, the synapses per (input channel, tap) of the
    core's channels there (runs of channels, from the cumulative ``cum``), laid over the
    input window at each tap's offset; the window's nonzero cells are the triples."""
    src = np.empty(cap, dtype=np.int64)
    core = np.empty(cap, dtype=np.int64)
    count = np.empty(cap, dtype=np.int64)
    w = np.zeros((ci, cum.shape[2]), dtype=np.int64)
    m = 0
    for i in range(cores.size):
        b = cores[i]
        c0, c1, y0, y1, x0, x1 = box[i, 0], box[i, 1], box[i, 2], box[i, 3], box[i, 4], box[i, 5]
        hw = (y1 - y0 - 1) * sy + (cum.shape[2] // kw - 1) * dy + 1
        ww = (x1 - x0 - 1) * sx + (kw - 1) * dx + 1
        window = np.zeros((ci, hw, ww), dtype=np.int64)
        for y in range(y0, y1):
            for x in range(x0, x1):
                w[:] = 0
                here = False
                oc = c0
                while oc < c1:
                    if grid[oc, y, x] != b:
                        oc += 1
                        continue
                    r0 = oc
                    while oc < c1 and grid[oc, y, x] == b:
                        oc += 1
                    for a in range(ci):
                        for t in taps:
                            w[a, t] += cum[oc, a, t] - cum[r0, a, t]
                    here = True
                if not here:
                    continue
                for t in taps:
                    wy = (y - y0) * sy + (t // kw) * dy
                    wx = (x - x0) * sx + (t % kw) * dx
                    for a in range(ci):
                        window[a, wy, wx] += w[a, t]
        oy, ox = y0 * sy - py, x0 * sx - px  # the window's corner in input coordinates
        for a in range(ci):
            for ry in range(max(0, -oy), min(hw, hi - oy)):
                for rx in range(max(0, -ox), min(ww, wi - ox)):
                    v = window[a, ry, rx]
                    if v:
                        src[m] = (a * hi + ry + oy) * wi + rx + ox
                        core[m] = b
                        count[m] = v
                        m += 1
    return src[:m], core[:m], count[:m]


def valid_positions(n_out: int, n_in: int, stride: int, pad: int, dil: int, k: int) -> np.ndarray:
    """Per tap of one axis: how many of the ``n_out`` output positions read inside the input."""
    o = np.arange(n_out)[:, None] * stride - pad + np.arange(k)[None, :] * dil
    return ((o >= 0) & (o < n_in)).sum(axis=0)


@dataclass(frozen=True, eq=False)
class ConvProjection:
    """Synapses from population ``source`` to population ``target`` as a 2-d convolution.

    ``in_shape``/``out_shape`` are (C, H, W) (a 1-d conv: H = 1); ``weight`` is
    (C_out, C_in / groups, KH, KW). A synapse exists per nonzero weight and output position
    whose input position lies inside the input (zero padding feeds no synapse).
    """

    source: int
    target: int
    in_shape: tuple[int, int, int]
    out_shape: tuple[int, int, int]
    weight: np.ndarray
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1

    def __post_init__(self):
        put = object.__setattr__
        put(self, "weight", np.ascontiguousarray(self.weight, dtype=np.float32))
        for f in ("in_shape", "out_shape"):
            put(self, f, tuple(int(v) for v in getattr(self, f)))
        for f in ("stride", "padding", "dilation"):
            put(self, f, tuple(int(v) for v in getattr(self, f)))
        put(self, "source", int(self.source))
        put(self, "target", int(self.target))
        put(self, "groups", int(self.groups))
        self._validate()

    def _validate(self):
        def bad(msg):
            raise InvalidNetworkError(f"convolution {self.source}->{self.target}: {msg}")

        w, g = self.weight, self.groups
        if len(self.in_shape) != 3 or len(self.out_shape) != 3 or min(self.in_shape) < 1:
            bad(f"shapes {self.in_shape} -> {self.out_shape} must both be (C, H, W)")
        if min(self.out_shape) < 1:
            bad(f"its output shape {self.out_shape} is empty")
        if w.ndim != 4 or g < 1 or w.shape[0] != self.out_shape[0] or w.shape[0] % g:
            bad(f"weight {w.shape} does not give {self.out_shape[0]} output channels in {g} groups")
        if w.shape[1] * g != self.in_shape[0]:
            bad(f"weight shape {w.shape} with {g} groups does not take {self.in_shape[0]} channels")
        if min(self.stride) < 1 or min(self.dilation) < 1 or min(self.padding) < 0:
            bad("stride and dilation must be at least 1 and padding not negative")

    # ------------------------------------------------------------------ sizes
    @property
    def kernel(self) -> tuple[int, int]:
        return int(self.weight.shape[2]), int(self.weight.shape[3])

    @property
    def n_in(self) -> int:
        return int(np.prod(self.in_shape))

    @property
    def n_out(self) -> int:
        return int(np.prod(self.out_shape))

    def describe(self) -> tuple:
        """What defines the projection (for fingerprints)."""
        return (self.source, self.target, self.in_shape, self.out_shape, self.weight.shape,
                self.stride, self.padding, self.dilation, self.groups)  # fmt: skip

    @cached_property
    def _cumulative(self) -> tuple[np.ndarray, np.ndarray]:
        """(cum, live): ``cum[c]`` the nonzero weights per (input channel, tap) of output
        channels 0..c-1, the groups laid out in full; ``live`` the taps with any weight."""
        co, cig, kh, kw = self.weight.shape
        nz = np.zeros((co, self.in_shape[0], kh * kw), dtype=np.int64)
        per = co // self.groups
        for g in range(self.groups):  # groups, not neurons: a handful
            nz[g * per : (g + 1) * per, g * cig : (g + 1) * cig] = (
                self.weight[g * per : (g + 1) * per].reshape(per, cig, kh * kw) != 0
            )
        cum = np.concatenate([np.zeros((1, *nz.shape[1:]), np.int64), np.cumsum(nz, axis=0)])
        return cum, np.flatnonzero(nz.any(axis=(0, 1))).astype(np.int64)

    @cached_property
    def _valid_taps(self) -> np.ndarray:
        """Per tap (ky, kx) flattened: output positions whose input lies inside."""
        (_, hi, wi), (_, ho, wo) = self.in_shape, self.out_shape
        kh, kw = self.kernel
        vy = valid_positions(ho, hi, self.stride[0], self.padding[0], self.dilation[0], kh)
        vx = valid_positions(wo, wi, self.stride[1], self.padding[1], self.dilation[1], kw)
        return np.outer(vy, vx).ravel()

    @cached_property
    def n_synapses(self) -> int:
        """Synapses of the expanded projection (one per nonzero weight and valid position)."""
        per_tap = (self.weight != 0).sum(axis=(0, 1)).ravel()
        return int((per_tap.astype(np.int64) * self._valid_taps).sum())

    def fan_out(self) -> np.ndarray:
        """Synapses each source neuron sends (local C order), without expanding: per tap,
        the nonzero weights from each input channel times whether the tap's window reaches
        the input row and column."""
        (ci, hi, wi), (_, ho, wo) = self.in_shape, self.out_shape
        kh, kw = self.kernel
        (sy, sx), (py, px), (dy, dx) = self.stride, self.padding, self.dilation
        rows, cols = np.zeros((kh, hi)), np.zeros((kw, wi))
        for ky in range(kh):  # taps: a handful
            iy = np.arange(ho) * sy - py + ky * dy
            rows[ky, iy[(iy >= 0) & (iy < hi)]] = 1
        for kx in range(kw):
            ix = np.arange(wo) * sx - px + kx * dx
            cols[kx, ix[(ix >= 0) & (ix < wi)]] = 1
        nz = self._cumulative[0][-1].reshape(ci, kh, kw).astype(np.float64)
        fan = np.einsum("cab,ay,bx->cyx", nz, rows, cols, optimize=True)
        return np.rint(fan).astype(np.int64).ravel()

    @cached_property
    def unit_weights(self) -> bool:
        """Whether every stored weight is 1 (then an expanded CSR needs no weights)."""
        w = self.weight[self.weight != 0]
        return bool(np.all(w == 1))

    # ------------------------------------------------------------------ composition
    def then_pool(self, kernel, stride, out_shape, value: float) -> ConvProjection:
        """This conv followed by a pool of window ``kernel`` and ``stride`` (no padding),
        each window entry weighted ``value`` (1 for a sum pool, 1/area for an average)."""
        kh, kw = self.kernel
        (sy, sx), (dy, dx) = self.stride, self.dilation
        (ph, pw), (ty, tx) = (int(v) for v in kernel), (int(v) for v in stride)
        nh, nw = (ph - 1) * sy + (kh - 1) * dy + 1, (pw - 1) * sx + (kw - 1) * dx + 1
        w = np.zeros((*self.weight.shape[:2], nh, nw), dtype=np.float64)
        for py in range(ph):  # the pool's window: a handful of offsets
            for px in range(pw):
                w[:, :, py * sy : py * sy + (kh - 1) * dy + 1 : dy,
                  px * sx : px * sx + (kw - 1) * dx + 1 : dx] += self.weight * value  # fmt: skip
        return ConvProjection(
            self.source, self.target, self.in_shape, out_shape, w,
            stride=(sy * ty, sx * tx), padding=self.padding, dilation=(1, 1), groups=self.groups,
        )  # fmt: skip

    @classmethod
    def pool(cls, source, target, in_shape, out_shape, kernel, stride, padding, value: float):
        """A pool as a depthwise convolution of ``value``s."""
        c = int(in_shape[0])
        w = np.full((c, 1, int(kernel[0]), int(kernel[1])), value, dtype=np.float64)
        return cls(source, target, in_shape, out_shape, w, stride, padding, (1, 1), groups=c)

    # ------------------------------------------------------------------ explicit
    def expand(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source index, target index, weight) of every synapse, local C-order indices."""
        (_, hi, wi), (co, ho, wo) = self.in_shape, self.out_shape
        kh, kw = self.kernel
        (sy, sx), (py, px), (dy, dx) = self.stride, self.padding, self.dilation
        cig, per = self.weight.shape[1], co // self.groups
        src, dst, val = [], [], []
        for t in range(kh * kw):  # taps: a handful
            ky, kx = divmod(t, kw)
            oc, icl = np.nonzero(self.weight[:, :, ky, kx])
            if oc.size == 0:
                continue
            ic = (oc // per) * cig + icl
            y = np.arange(ho)
            iy = y * sy - py + ky * dy
            y, iy = y[(iy >= 0) & (iy < hi)], iy[(iy >= 0) & (iy < hi)]
            x = np.arange(wo)
            ix = x * sx - px + kx * dx
            x, ix = x[(ix >= 0) & (ix < wi)], ix[(ix >= 0) & (ix < wi)]
            pos_in = (iy[:, None] * wi + ix[None, :]).ravel()
            pos_out = (y[:, None] * wo + x[None, :]).ravel()
            src.append((ic[:, None] * (hi * wi) + pos_in[None, :]).ravel())
            dst.append((oc[:, None] * (ho * wo) + pos_out[None, :]).ravel())
            val.append(np.repeat(self.weight[oc, icl, ky, kx], pos_in.size))
        if not src:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.float32)
        return np.concatenate(src), np.concatenate(dst), np.concatenate(val).astype(np.float32)

    # ------------------------------------------------------------------ per core
    def counts(self, part: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(source index, core, synapses) for every source neuron with synapses in a core.

        ``part`` gives the core of every target neuron (local C-order, ids ≥ 0). Triples
        are unique per (source, core); the synapses of a triple are the source's synapses
        into that core.
        """
        (ci, hi, wi), (co, ho, wo) = self.in_shape, self.out_shape
        kh, kw = self.kernel
        (sy, sx), (py, px), (dy, dx) = self.stride, self.padding, self.dilation
        part = np.asarray(part, dtype=np.int64)
        if part.shape != (self.n_out,):
            raise InvalidNetworkError(
                f"convolution {self.source}->{self.target}: {part.size} cores given for "
                f"{self.n_out} target neurons"
            )
        grid = part.reshape(co, ho, wo)
        order = np.argsort(part, kind="stable")
        cores, starts = np.unique(part[order], return_index=True)
        c, y, x = np.unravel_index(order, (co, ho, wo))
        box = np.stack(
            [f.reduceat(v, starts) + add for v in (c, y, x)
             for f, add in ((np.minimum, 0), (np.maximum, 1))],
            axis=1,
        ).astype(np.int64)  # fmt: skip
        hb, wb = box[:, 3] - box[:, 2], box[:, 5] - box[:, 4]
        windows = ci * ((hb - 1) * sy + (kh - 1) * dy + 1) * ((wb - 1) * sx + (kw - 1) * dx + 1)
        _check_memory(self, int(windows.sum()), cores.size)
        cum, live = self._cumulative
        return _core_counts(
            grid, cores.astype(np.int64), box, cum, live, ci, hi, wi,
            sy, sx, py, px, dy, dx, kw, int(windows.sum()),
        )  # fmt: skip
