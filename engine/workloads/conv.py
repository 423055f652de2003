"""A small layered convolutional SNN (a DVS-style gesture classifier shape).

Input ``2 × size × size`` (ON/OFF event channels) → conv 3×3, 8 channels →
conv 3×3 stride 2, 16 channels → conv 3×3 stride 2, 32 channels → dense 10.
Convolutions are zero-padded; every output neuron of a convolution connects to the
3×3 window of every input channel. Per-neuron spike rates are log-normal around a
per-layer median that falls with depth (0.2, 0.12, 0.08, 0.05, 0.02).
"""

from __future__ import annotations

import numpy as np

from engine.arrays import csr_from_pairs
from engine.model.network import Network
from engine.workloads import ALL, estimates, register
from engine.workloads._build import require

LAYER_MEDIAN_RATES = (0.2, 0.12, 0.08, 0.05, 0.02)


def conv_synapses(c_in, h_in, w_in, c_out, stride, kernel=3):
    """(src, dst) local indices of a zero-padded kernel×kernel convolution (C, H, W order)."""
    pad = kernel // 2
    h_out, w_out = (h_in + 2 * pad - kernel) // stride + 1, (w_in + 2 * pad - kernel) // stride + 1
    co, oy, ox, ci, ky, kx = np.meshgrid(
        np.arange(c_out), np.arange(h_out), np.arange(w_out),
        np.arange(c_in), np.arange(kernel), np.arange(kernel), indexing="ij",
    )  # fmt: skip
    iy, ix = oy * stride + ky - pad, ox * stride + kx - pad
    ok = (iy >= 0) & (iy < h_in) & (ix >= 0) & (ix < w_in)
    src = (ci * h_in + iy) * w_in + ix
    dst = (co * h_out + oy) * w_out + ox
    return src[ok], dst[ok], (c_out, h_out, w_out)


@register("conv-snn")
def conv_snn(*, size: int = 16, seed: int = 0) -> Network:
    """Small layered convolutional SNN: 2×size×size events → 3 convolutions → 10 classes."""
    require(4 <= size <= 128, "conv-snn: size must lie in 4..128")
    rng = np.random.default_rng(seed)
    shapes = [(2, size, size)]
    srcs, dsts = [], []
    for c_out, stride in ((8, 1), (16, 2), (32, 2)):
        s, d, shape = conv_synapses(*shapes[-1], c_out, stride)
        srcs.append(s)
        dsts.append(d)
        shapes.append(shape)
    flat_in = int(np.prod(shapes[-1]))
    srcs.append(np.repeat(np.arange(flat_in), 10))
    dsts.append(np.tile(np.arange(10), flat_in))
    shapes.append((10, 1, 1))
    sizes = np.array([int(np.prod(s)) for s in shapes])
    starts = np.concatenate([[0], np.cumsum(sizes)])
    src = np.concatenate([s + starts[k] for k, s in enumerate(srcs)])
    dst = np.concatenate([d + starts[k + 1] for k, d in enumerate(dsts)])
    n = int(starts[-1])
    indptr, indices = csr_from_pairs(n, src, dst)
    population = np.repeat(np.arange(len(sizes)), sizes)
    median = np.asarray(LAYER_MEDIAN_RATES)[population]
    rate = np.minimum(median * rng.lognormal(0.0, 0.5, n), 1.0)
    names = ["input", "conv1", "conv2", "conv3", "output"]
    return Network(
        name="conv-snn",
        indptr=indptr,
        indices=indices,
        population=population,
        population_names=names,
        rate=rate,
        description="layered convolutional SNN "
        + " → ".join("x".join(map(str, s)) for s in shapes),
    )


@estimates("conv-snn", on_cores=ALL)
def _conv_snn_size(*, size: int, **_) -> tuple[int, int]:
    side = [size, size, (size - 1) // 2 + 1]
    side.append((side[2] - 1) // 2 + 1)
    channels = (2, 8, 16, 32)
    neurons = sum(c * s * s for c, s in zip(channels, side, strict=True)) + 10
    synapses = sum(9 * channels[k] * channels[k + 1] * side[k + 1] ** 2 for k in range(3))
    return neurons, synapses + 10 * channels[3] * side[3] ** 2
