"""NIR graphs for tests: the real exports in ``tests/data/nir`` and small graphs written on
the spot (every structured case of a convolutional network; one large convolution)."""

from __future__ import annotations

from pathlib import Path

import nir
import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data" / "nir"  # real exports (see its README)
BROKEN = [  # an edge to a node the graph does not have
    "paper_03_rnn_extras_braille_noDelay_bias_zero_subgraph.nir",
    "paper_03_rnn_extras_braille_noDelay_noBias_subtract_subgraph.nir",
]


def one(shape) -> np.ndarray:
    return np.ones(shape, dtype=np.float32)


def lif(shape):
    """A LIF population of ``shape`` (all parameters one, no leak)."""
    return nir.LIF(tau=one(shape), r=one(shape), v_leak=0 * one(shape), v_threshold=one(shape))


def write(tmp_path, nodes, edges, name="g.nir", type_check=True) -> Path:
    """The NIR file of a graph of ``nodes`` and ``edges``."""
    path = tmp_path / name
    nir.write(path, nir.NIRGraph(nodes=nodes, edges=edges, type_check=type_check))
    return path


def weights(rng: np.random.Generator, shape, zeros=0.3) -> np.ndarray:
    """Normal weights of ``shape``, a ``zeros`` share of them zero."""
    w = rng.normal(size=shape).astype(np.float32)
    w[rng.random(shape) < zeros] = 0
    return w


def cnn(tmp_path, name="cnn.nir", seed: int = 7) -> Path:
    """Input → conv(stride 2, dilation, groups) → LIF → conv + sum pool → LIF → avg pool
    → LIF → flatten → linear → LIF: every structured case and an explicit layer after."""
    rng = np.random.default_rng(seed)
    c1 = nir.Conv2d(
        input_shape=(9, 11), weight=weights(rng, (6, 2, 3, 3)), stride=(2, 1), padding=(1, 2),
        dilation=(1, 2), groups=2, bias=np.zeros(6, np.float32),
    )  # fmt: skip
    s1 = (6, 5, 11)
    c2 = nir.Conv2d(
        input_shape=s1[1:], weight=weights(rng, (5, 6, 2, 3)), stride=1, padding=1, dilation=1,
        groups=1, bias=np.zeros(5, np.float32),
    )  # fmt: skip
    pool = nir.SumPool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    s2 = (5, 3, 5)  # conv: (5, 6, 11) → pool: (5, 3, 5)
    avg = nir.AvgPool2d(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0))
    s3 = (5, 4, 2)
    nodes = {
        "in": nir.Input(input_type=np.array([4, 9, 11])),
        "c1": c1, "l1": lif(s1), "c2": c2, "p2": pool, "l2": lif(s2), "a3": avg,
        "l3": lif(s3), "fc": nir.Linear(weight=weights(rng, (7, 40))), "l4": lif((7,)),
        "flat": nir.Flatten(start_dim=0, end_dim=-1, input_type={"input": np.array(s3)}),
        "out": nir.Output(output_type=np.array([7])),
    }  # fmt: skip
    edges = [("in", "c1"), ("c1", "l1"), ("l1", "c2"), ("c2", "p2"), ("p2", "l2"), ("l2", "a3"),
             ("a3", "l3"), ("l3", "flat"), ("flat", "fc"), ("fc", "l4"), ("l4", "out")]  # fmt: skip
    return write(tmp_path, nodes, edges, name, type_check=False)


def big_conv(tmp_path, channels=64, side=128) -> Path:
    """One 3×3 convolution of ``channels`` channels over a ``side``² image (64 × 128²: 6·10⁸
    synapses), between an input and a LIF population."""
    nodes = {
        "in": nir.Input(input_type=np.array([channels, side, side])),
        "conv": nir.Conv2d(
            input_shape=(side, side), weight=np.ones((channels, channels, 3, 3), np.float32),
            stride=1, padding=1, dilation=1, groups=1, bias=np.zeros(channels, np.float32),
        ),
        "lif": lif((channels, side, side)),
        "out": nir.Output(output_type=np.array([channels, side, side])),
    }  # fmt: skip
    edges = [("in", "conv"), ("conv", "lif"), ("lif", "out")]
    return write(tmp_path, nodes, edges, "big.nir")
