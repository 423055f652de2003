"""A small recurrent spiking network trained with and without routing awareness: the routing
paper's Fig. 3b (accuracy against routing memory) on a synthetic task — NOT its SHD result.

**Task** (``task``): *burst order*. Three groups of four input channels each burst once (every
channel spikes with probability 0.5 for 4 steps); the bursts start 10 steps apart, each onset
jittered by ±2, and every channel also spikes with probability 0.02 at every step (34 steps).
The class is the order of the three groups, 3! = 6 classes, balanced. Every class has each
burst once, so spike counts carry no class: only timing and order do, and the bursts are
further apart than the membrane's time constant (~4.5 steps), so the network needs memory.

**Network**: N LIF neurons (N = the Mosaic's: 144 on mosaic-8x8@3x3, placed in order on the NTs,
``sequential_nt``), leak 0.8, threshold 1, soft reset; dense input weights (12 × N), recurrent
W (N × N), a linear readout of the spike rates → softmax cross entropy. BPTT with a fast-sigmoid
surrogate gradient (``LIF``), numpy only, float32, batches vectorised (a loop over time steps
only); Adam for the input and readout weights.

**Methods** for W (``train``), both stepping along Adam's normalised gradient g at 0.005:

* ``routing-aware``: DeepR under a target hop profile P̂ = (p̂₀, p̂₁, p̂₂, p̂₃), farther 0:
  W starts from ``Rewiring.initial`` and every step goes through ``Rewiring.step(W, mask, g,
  lr)`` (SGD + L1 λ = 0.1 on the active connections, sign flips pruned, as many regrown where
  the profile has room): every hop class stays at or below its cap, the connection count fixed.
* ``l1``: the paper's non-routing-aware baseline — a dense W trained with proximal L1 (each step
  W ← W − lr·g, then |w| shrunk by lr·λ and clipped at 0), then every |w| < 0.02 (× threshold)
  dropped; the pruned network is scored as it is, not retrained.
* ``feedforward``: W = 0, the reference for what recurrence adds.

Each trained W is placed on the Mosaic (``network_of``: a ``Network`` of its nonzeros, the input
channels a spike source) and counted by ``routing_memory`` (shared-path routing): the routing
entries (Fig. 3b's memory count), whether it fits the preset's 64-row NT and RT crossbars, and
the largest RT's rows. ``run_demo`` sweeps both methods; ``figure`` draws the result.

**What it showed** (``python -m engine.mosaic.demo``: seed 0, 640 training and 512 held-out
trials, 8 epochs; 17–21 s on a loaded 2-core machine; seed 1's accuracy in brackets)::

    method         setting                 accuracy       connections  routing entries  mappable
    routing-aware  p0=0.5                  0.859 (0.971)   1152            0            yes
    routing-aware  p0=0.5,p1=0.01,p3=0.002 0.920 (0.959)   1221           81            yes
    routing-aware  p0=0.5,p1=0.03,p3=0.005 0.965 (0.975)   1356          209            yes
    routing-aware  p0=0.5,p1=0.1,p3=0.02   0.943 (0.979)   1847          529            no (NT rows)
    routing-aware  p0=0.5,p1=0.2,p3=0.05   0.957 (0.953)   2584          795            no
    l1             lambda=0                0.932 (0.955)  18543         2752            no
    l1             lambda=0.3              0.924 (0.945)   5271         2678            no
    l1             lambda=0.6              0.867 (0.895)   3944         2428            no
    l1             lambda=0.9              0.815 (0.791)   2489         2001            no
    l1             lambda=1.2              0.742 (0.707)    508          744            yes
    l1             lambda=1.5              0.709 (0.691)     41           37            yes
    feedforward    W=0                     0.713 (0.693)      0            0            yes

* At equal routing memory the routing-aware networks are far ahead: below 800 entries they
  score 0.86–0.97, the L1 networks 0.71–0.74, no better than W = 0. L1 keeps the dense
  network's accuracy only with ~2700 entries (λ ≤ 0.3); the routing-aware networks score as
  well (0.92–0.97) with 81–209, over ten times less — the direction of the paper's SHD claim,
  on a much easier task.
* But on this task the routing-aware curve is flat: recurrence within the tiles alone
  (p0 = 0.5, no routing memory at all) gives 0.86 (0.97), and the differences between the
  targets (a few points) are no larger than between the two seeds. The task needs memory
  (W = 0 stays near 0.7) but not connections between tiles; a single run per setting, no error
  bars. Where L1's connections land — on every hop distance, each far one a route — is what
  costs it: 508 L1 connections need 744 entries, 1221 routing-aware ones 81.
* The Mosaic preset's 64-row crossbars take the profiles up to p1 = 0.03, p3 = 0.005; denser
  ones overflow the NTs' input rows first (101 and 123 rows: a row for every remote neuron with
  a synapse onto the tile, and the 12 input channels; the densest also its RTs, 72 rows) while
  their routing memory is still small. The L1 networks fit only once nearly all their
  connections are gone (λ ≥ 1.2).
* The L1 baseline is scored right after pruning, and its shrinkage also slows the learning of
  the weights it keeps; retraining the pruned network (not tried) would narrow the gap.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from engine.arrays import csr_from_pairs
from engine.hardware import load_hardware
from engine.model.network import Network
from engine.mosaic.memory import routing_memory
from engine.mosaic.profile import hop_matrix, sequential_nt
from engine.mosaic.rewire import Rewiring

__all__ = [
    "LIF",
    "METHODS",
    "Trained",
    "figure",
    "forward",
    "loss_and_grads",
    "memory_of",
    "n_classes",
    "network_of",
    "predict",
    "run_demo",
    "task",
    "train",
]

TASK = "burst order"
NOTE = "synthetic temporal task, not the SHD result of the paper"


# ------------------------------------------------------------------ the task
def task(
    n_samples: int,
    *,
    seed: int,
    symbols: int = 3,
    lines: int = 4,
    gap: int = 10,
    burst: int = 4,
    jitter: int = 2,
    burst_rate: float = 0.5,
    noise: float = 0.02,
) -> tuple[np.ndarray, np.ndarray]:
    """``n_samples`` trials of the burst-order task: inputs [samples, T, symbols × lines] of 0/1
    and labels in 0 … symbols! − 1 (as balanced as ``n_samples`` allows).

    Each of ``symbols`` groups of ``lines`` input channels bursts once (every line spikes with
    probability ``burst_rate`` for ``burst`` steps); the bursts start ``gap`` steps apart, each
    onset jittered by up to ±``jitter``, and every channel also spikes with probability
    ``noise`` at every step. The class is the order of the groups, one of the symbols!
    permutations, so every class has the same spikes per channel on average: only the order
    in time tells them apart."""
    rng = np.random.default_rng(seed)
    orders = np.array(list(itertools.permutations(range(symbols))))
    labels = rng.permutation(np.arange(n_samples) % len(orders))
    lead = jitter + 1
    steps = lead + (symbols - 1) * gap + jitter + burst + gap // 2
    shift = rng.integers(-jitter, jitter + 1, (n_samples, symbols))
    onset = lead + gap * np.arange(symbols) + shift  # per trial and position in the order
    # onset of every symbol: the onset of the position it takes in its trial's order
    position = np.argsort(orders, axis=1)[labels]
    start = np.take_along_axis(onset, position, axis=1)
    t = np.arange(steps)[None, :, None]
    on = (t >= start[:, None, :]) & (t < start[:, None, :] + burst)
    p = np.repeat(np.where(on, burst_rate, noise), lines, axis=2)
    return (rng.random(p.shape) < p).astype(float), labels.astype(np.int64)


def n_classes(symbols: int = 3) -> int:
    """Classes of the burst-order task: the orders of ``symbols`` bursts."""
    return math.factorial(symbols)


# ------------------------------------------------------------------ the network
@dataclass(frozen=True)
class LIF:
    """Leaky integrate-and-fire neurons in discrete time and the surrogate gradient.

    v[t] = alpha · v[t−1] + x[t] W_in + s[t−1] W − theta · s[t−1]   (soft reset)
    s[t] = H(v[t] − theta), its derivative taken as the fast sigmoid
           gain / (1 + slope · |v − theta|)²  (SuperSpike)

    ``smooth``: spikes are sigmoid(slope · (v − theta)) and the backward pass uses its exact
    derivative, so BPTT gives the true gradient (for checks). ``reset_grad``: the gradient also
    flows through the reset term (detached by default)."""

    alpha: float = 0.8
    theta: float = 1.0
    slope: float = 5.0
    gain: float = 0.5
    smooth: bool = False
    reset_grad: bool = False

    def spike(self, v: np.ndarray) -> np.ndarray:
        u = v - self.theta
        if self.smooth:
            return 0.5 * (1.0 + np.tanh(0.5 * self.slope * u))  # the sigmoid, no overflow
        return (u > 0).astype(v.dtype)

    def pseudo(self, v: np.ndarray) -> np.ndarray:
        """ds/dv as the backward pass takes it."""
        u = v - self.theta
        if self.smooth:
            s = 0.5 * (1.0 + np.tanh(0.5 * self.slope * u))
            return self.slope * s * (1.0 - s)
        return self.gain / (1.0 + self.slope * np.abs(u)) ** 2


# OpenBLAS runs a gemm of m·n·k up to 4 · 65536 on one thread and splits larger ones over
# threads; on a loaded two-core machine those threads were measured to slow training 15-fold
# (and even the one large product a batch, W's gradient, twice), so every product is cut into
# stacked gemms of at most that size: numpy's stacked matmul calls one gemm per item.
_ONE_THREAD = 4 * 65536


def _chunk(rows: int, work: int) -> int:
    """The largest divisor c of ``rows`` with c · ``work`` ≤ _ONE_THREAD (at least 1)."""
    c = max(1, min(rows, _ONE_THREAD // max(work, 1)))
    while rows % c:
        c -= 1
    return c


def _mm(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """a [R, K] @ w [K, M] in one-thread gemms."""
    r, k = a.shape
    c = _chunk(r, k * w.shape[1])
    if c == r:
        return a @ w
    return np.matmul(a.reshape(r // c, c, k), w).reshape(r, w.shape[1])


def _tmm(a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """aᵀ @ d for a [R, K], d [R, M] in one-thread gemms."""
    r, k = a.shape
    m = d.shape[1]
    c = _chunk(r, k * m)
    if c == r:
        return a.T @ d
    parts = np.matmul(a.reshape(r // c, c, k).transpose(0, 2, 1), d.reshape(r // c, c, m))
    return parts.sum(axis=0)


def forward(params: dict, x: np.ndarray, lif: LIF = LIF()) -> tuple[np.ndarray, dict]:
    """Run the RSNN on ``x`` [batch, T, channels]: logits [batch, classes] from the neurons'
    spike rates (spikes summed over time / T) through a linear readout, and what the backward
    pass needs."""
    w_in, w_rec = params["w_in"], params["w_rec"]
    b, steps, n_in = x.shape
    n, dtype = w_rec.shape[0], w_rec.dtype  # float32 in training, float64 for checks
    xt = np.ascontiguousarray(x.transpose(1, 0, 2), dtype=dtype).reshape(steps * b, n_in)
    drive = _mm(xt, w_in).reshape(steps, b, n)  # (t, b) rows
    v = np.zeros((b, n), dtype)
    s = np.zeros((b, n), dtype)
    vs = np.empty((steps, b, n), dtype)
    ss = np.zeros((steps + 1, b, n), dtype)  # ss[t + 1] = s[t]; ss[0] = 0
    for t in range(steps):
        v = lif.alpha * v + drive[t] + _mm(s, w_rec) - lif.theta * s
        s = lif.spike(v)
        vs[t], ss[t + 1] = v, s
    rate = ss[1:].mean(axis=0)
    logits = rate @ params["w_out"] + params["b_out"]
    return logits, {"xt": xt, "v": vs, "s": ss, "rate": rate}


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def loss_and_grads(params: dict, x: np.ndarray, y: np.ndarray, lif: LIF = LIF()):
    """Mean softmax cross entropy of the batch and its BPTT gradient with respect to every
    parameter (surrogate derivative at the spikes): returns (loss, grads, logits)."""
    logits, c = forward(params, x, lif)
    b = x.shape[0]
    p = _softmax(logits)
    loss = float(-np.log(p[np.arange(b), y] + 1e-12).mean())
    dz = p
    dz[np.arange(b), y] -= 1.0
    dz /= b
    vs, ss = c["v"], c["s"]
    steps = vs.shape[0]
    w_rec_t = np.ascontiguousarray(params["w_rec"].T)
    ds_out = dz @ params["w_out"].T / steps  # dL/ds[t] through the readout, every t
    dv = np.zeros_like(ds_out)
    dvs = np.empty_like(vs)
    g_rec = np.zeros_like(w_rec_t)
    for t in range(steps - 1, -1, -1):  # dv holds dL/dv[t + 1]
        ds = ds_out + _mm(dv, w_rec_t)
        if lif.reset_grad:
            ds -= lif.theta * dv
        dv = ds * lif.pseudo(vs[t]) + lif.alpha * dv
        dvs[t] = dv
        g_rec += _tmm(ss[t], dv)  # v[t] took in the spikes s[t − 1] = ss[t]
    grads = {
        "w_in": _tmm(c["xt"], dvs.reshape(steps * b, -1)),
        "w_rec": g_rec,
        "w_out": c["rate"].T @ dz,
        "b_out": dz.sum(axis=0),
    }
    return loss, grads, logits


def predict(params: dict, x: np.ndarray, lif: LIF = LIF()) -> np.ndarray:
    """The class of every trial of ``x``: the largest logit."""
    return forward(params, x, lif)[0].argmax(axis=1)


# ------------------------------------------------------------------ on the Mosaic
def network_of(w_rec: np.ndarray, *, w_in: np.ndarray | None = None, rate=0.1,
               name: str = "rsnn") -> Network:  # fmt: skip
    """The RSNN as a ``Network``: a synapse for every nonzero of ``w_rec`` (N × N, rows the
    presynaptic neurons). With ``w_in`` (channels × N) the input channels come first, as a
    spike-source population (they enter the NTs directly and take NT rows, no RT)."""
    w_rec = np.asarray(w_rec)
    n = w_rec.shape[0]
    k = 0 if w_in is None else np.asarray(w_in).shape[0]
    full = np.zeros((k + n, k + n), dtype=bool)
    full[k:, k:] = w_rec != 0
    if k:
        full[:k, k:] = np.asarray(w_in) != 0
    indptr, indices = csr_from_pairs(k + n, *np.nonzero(full))
    return Network(
        name=name,
        indptr=indptr,
        indices=indices,
        population=np.repeat(np.arange(2 if k else 1, dtype=np.int32), [k, n] if k else [n]),
        population_names=("inputs", "rsnn") if k else ("rsnn",),
        rate=np.broadcast_to(np.asarray(rate, dtype=float), (k + n,)),
        spike_source=(True, False) if k else None,
    )


def memory_of(w_rec: np.ndarray, hardware, nt_of: np.ndarray, *,
              w_in: np.ndarray | None = None) -> dict:  # fmt: skip
    """Routing memory of the RSNN with neuron i on NT ``nt_of[i]`` (shared-path routing)."""
    k = 0 if w_in is None else np.asarray(w_in).shape[0]
    nt = np.concatenate([np.full(k, -1, np.int64), np.asarray(nt_of, np.int64)])
    s = routing_memory(network_of(w_rec, w_in=w_in), hardware, nt).summary()
    return {
        "connections": int(np.count_nonzero(w_rec)),
        "routing_entries": s["routing_entries"],
        "mappable": s["mappable"],
        "max_rt_rows": s["max_rt_rows"],
        "max_nt_rows": s["max_nt_rows"],
    }


# ------------------------------------------------------------------ training
@dataclass
class Trained:
    """A trained RSNN: its parameters (``w_in``, ``w_rec``, ``w_out``, ``b_out``; the L1
    method's ``w_rec`` after pruning) and, before training and after every optimiser step, its
    recurrent connections and (routing-aware) its connections per hop distance, beside the
    caps the target profile allows."""

    method: str
    setting: str
    params: dict
    connections: list[int] = field(default_factory=list)
    class_counts: list[np.ndarray] = field(default_factory=list)
    caps: np.ndarray | None = None
    rewired: int = 0  # DeepR: connections pruned for a sign flip and regrown elsewhere


class _Adam:
    """Adam's moments for some arrays; ``direction`` gives the normalised step m̂ / (√v̂ + ε)."""

    def __init__(self, params: dict, b1=0.9, b2=0.999, eps=1e-8):
        self.b1, self.b2, self.eps, self.t = b1, b2, eps, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def direction(self, grads: dict) -> dict:
        self.t += 1
        c1, c2 = 1 - self.b1**self.t, 1 - self.b2**self.t
        out = {}
        for k in self.m:
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * grads[k]
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * grads[k] ** 2
            out[k] = (self.m[k] / c1) / (np.sqrt(self.v[k] / c2) + self.eps)
        return out


METHODS = ("routing-aware", "l1", "feedforward")


def train(
    x: np.ndarray,
    y: np.ndarray,
    *,
    method: str,
    n_neurons: int,
    hops: np.ndarray | None = None,
    target=None,
    l1: float = 0.0,
    threshold: float = 0.02,
    seed: int = 0,
    epochs: int = 8,
    batch: int = 32,
    lr: float = 0.03,
    lr_rec: float = 0.005,
    lif: LIF = LIF(),
    in_scale: float = 1.0,
    rec_gain: float = 1.5,
    n_out: int | None = None,
) -> Trained:
    """Train the RSNN on (x, y) with BPTT in float32 (mini-batches of ``batch``, the last
    partial one dropped). Input and readout weights: Adam at ``lr``. The recurrent matrix W
    steps along Adam's normalised gradient g = m̂ / (√v̂ + ε) (moments kept for every entry,
    active or not) at ``lr_rec``, the L1 term added outside Adam:

    * ``routing-aware``: W from ``Rewiring(hops, target).initial`` (Gaussian, std
      ``rec_gain`` / √fan-in) and every step through ``Rewiring.step(W, mask, g, lr_rec)``:
      DeepR under the hop profile — W ← W − lr_rec · (g + λ · sign W) on the active
      connections with λ = ``l1``, sign flips pruned, as many regrown at ±1e-3 where the
      profile has room;
    * ``l1``: a dense W (std ``rec_gain`` / √N) and the proximal step of L + λ‖W‖₁ with
      λ = ``l1``: W ← W − lr_rec · g, then every |w| shrunk by lr_rec · λ, clipped at 0.
      After training every weight with |w| < ``threshold`` · theta is dropped, with no
      retraining after: the pruned network is the one scored;
    * ``feedforward``: W = 0 throughout (what the inputs and readout alone achieve).
    """
    if method not in METHODS:
        raise ValueError(f"method is one of {', '.join(METHODS)}, not {method!r}")
    rng = np.random.default_rng(seed)
    f32 = np.float32
    x = np.asarray(x, f32)
    n_in = x.shape[2]
    n_out = int(y.max()) + 1 if n_out is None else n_out
    params = {
        "w_in": rng.normal(0.0, in_scale / math.sqrt(n_in), (n_in, n_neurons)).astype(f32),
        "w_out": rng.normal(0.0, 1.0 / math.sqrt(n_neurons), (n_neurons, n_out)).astype(f32),
        "b_out": np.zeros(n_out, f32),
    }
    mask = None
    if method == "routing-aware":
        rw = Rewiring(hops, tuple(target), l1=l1, regrow_scale=1e-3, seed=seed + 1)
        fan_in = max(rw.capacity / n_neurons, 1.0)
        w, mask = rw.initial(rec_gain / math.sqrt(fan_in))
        w = w.astype(f32)
        out = Trained(method, _setting(method, target, l1), params, caps=rw.caps)
        out.class_counts.append(rw.counts(mask))
    elif method == "l1":
        w = rng.normal(0.0, rec_gain / math.sqrt(n_neurons), (n_neurons, n_neurons)).astype(f32)
        out = Trained(method, _setting(method, target, l1), params)
    else:
        w = np.zeros((n_neurons, n_neurons), f32)
        out = Trained(method, "W=0", params)
    adam = _Adam({**params, "w_rec": w})
    out.connections.append(int(np.count_nonzero(w)))
    n = x.shape[0]
    for _ in range(epochs):
        order = rng.permutation(n)
        for lo in range(0, n - batch + 1, batch):
            idx = order[lo : lo + batch]
            _, grads, _ = loss_and_grads({**params, "w_rec": w}, x[idx], y[idx], lif)
            step = adam.direction(grads)
            for k in params:
                params[k] = params[k] - lr * step[k]
            if method == "l1":  # proximal L1 (soft threshold): exact zeros, no oscillation
                w = w - lr_rec * step["w_rec"]
                w = np.sign(w) * np.maximum(np.abs(w) - f32(lr_rec * l1), f32(0))
            elif method == "routing-aware":
                w, mask, k = rw.step(w, mask, step["w_rec"], lr_rec)
                w = w.astype(f32)
                out.rewired += k
                out.class_counts.append(rw.counts(mask))
            out.connections.append(int(np.count_nonzero(w)))
    if method == "l1":
        w = np.where(np.abs(w) >= threshold * lif.theta, w, f32(0))
    out.params = {**params, "w_rec": w}
    return out


def _setting(method: str, target, l1: float) -> str:
    if method == "l1":
        return f"lambda={l1:g}"
    return ",".join(f"p{d}={v:g}" for d, v in enumerate(target) if v)


# ------------------------------------------------------------------ the sweep
TARGETS = (
    (0.5, 0.0, 0.0, 0.0),
    (0.5, 0.01, 0.0, 0.002),
    (0.5, 0.03, 0.0, 0.005),
    (0.5, 0.1, 0.0, 0.02),
    (0.5, 0.2, 0.0, 0.05),
)
L1_STRENGTHS = (0.0, 0.3, 0.6, 0.9, 1.2, 1.5)
QUICK_TARGETS = ((0.5, 0.0, 0.0, 0.0), (0.5, 0.05, 0.0, 0.01))
QUICK_L1 = (0.0, 1.5)
# training / test samples, epochs and batch of the full demo and of the quick one
FULL = {"train": 640, "test": 512, "epochs": 8, "batch": 32}
QUICK = {"train": 256, "test": 192, "epochs": 4, "batch": 32}


def run_demo(
    *,
    hardware: str = "mosaic-8x8@3x3",
    targets=None,
    l1_strengths=None,
    seed: int = 0,
    epochs: int | None = None,
    quick: bool = False,
    deepr_l1: float = 0.1,
) -> dict:
    """Fig. 3b on the burst-order task: train the RSNN once per target profile P̂
    (routing-aware, DeepR's own L1 ``deepr_l1``) and once per L1 strength λ (``l1``), score each
    on held-out trials and count its routing memory on ``hardware`` (shared-path routing, its
    neurons in order on the NTs, the input channels a spike source); plus one network without
    recurrent weights as the reference. ``quick``: fewer trials, epochs and settings (a few
    seconds, for tests). Same arguments, same result."""
    hw = load_hardware(hardware)
    n = hw.limits.neurons * hw.width * hw.height
    nt_of = sequential_nt(n, hw)
    hops = hop_matrix(hw, nt_of)
    if targets is None:
        targets = QUICK_TARGETS if quick else TARGETS
    if l1_strengths is None:
        l1_strengths = QUICK_L1 if quick else L1_STRENGTHS
    size = QUICK if quick else FULL
    epochs = size["epochs"] if epochs is None else epochs
    x, y = task(size["train"], seed=seed)
    xt, yt = task(size["test"], seed=seed + 10_000)
    lif = LIF()
    runs = [("routing-aware", {"target": tuple(t), "l1": deepr_l1}) for t in targets]
    runs += [("l1", {"l1": float(v)}) for v in l1_strengths]
    runs.append(("feedforward", {}))
    rows = []
    for method, kw in runs:
        net = train(x, y, method=method, n_neurons=n, hops=hops, seed=seed, epochs=epochs,
                    batch=size["batch"], lif=lif, n_out=n_classes(), **kw)  # fmt: skip
        p = net.params
        rows.append({
            "method": method,
            "setting": net.setting,
            "accuracy": round(float((predict(p, xt, lif) == yt).mean()), 4),
            **memory_of(p["w_rec"], hw, nt_of, w_in=p["w_in"]),
        })  # fmt: skip
    return {
        "task": f"{TASK}: {x.shape[2]} input channels, {x.shape[1]} steps, {n_classes()} "
                "classes (the order of 3 bursts)",
        "note": NOTE,
        "hardware": hardware,
        "neurons": n,
        "train_samples": size["train"],
        "test_samples": size["test"],
        "epochs": epochs,
        "chance": round(1 / n_classes(), 4),
        "rows": rows[:-1],
        "feedforward": rows[-1],
    }  # fmt: skip


def figure(result: dict, path) -> None:
    """Accuracy against routing entries, one series per method (filled: mappable on the
    hardware; hollow: not), the network without recurrent weights and chance as lines;
    written to ``path`` (PNG, SVG or PDF by its suffix)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, 5.0), layout="constrained")
    ax = fig.add_subplot()
    styles = {
        "routing-aware": ("tab:blue", "o", "routing-aware: DeepR under a hop profile P̂"),
        "l1": ("tab:orange", "s", "L1 (λ), then |w| < 0.02 pruned"),
    }
    for method, (colour, marker, label) in styles.items():
        rows = sorted((r for r in result["rows"] if r["method"] == method),
                      key=lambda r: r["routing_entries"])  # fmt: skip
        if not rows:
            continue
        names = [r["setting"] for r in rows]
        common = names[0].split(",")[0]
        if len(names) > 1 and all(f"{v},".startswith(f"{common},") for v in names):
            # every target's p0: said once in the legend
            names = [v.removeprefix(common).lstrip(",") or f"{common} only" for v in names]
            label += f" ({common})"
        xs = [r["routing_entries"] for r in rows]
        ys = [r["accuracy"] for r in rows]
        ax.plot(xs, ys, color=colour, lw=1, alpha=0.6)
        ax.plot([], [], color=colour, marker=marker, lw=1, label=label)
        for i, r in enumerate(rows):
            ax.scatter([xs[i]], [ys[i]], marker=marker, s=40, edgecolors=colour,
                       facecolors=colour if r["mappable"] else "none", zorder=3)  # fmt: skip
            ax.annotate(names[i], (xs[i], ys[i]), fontsize=6, color=colour,
                        xytext=(4, 6 if i % 2 else -10), textcoords="offset points")  # fmt: skip
    ff = result.get("feedforward")
    if ff:
        ax.axhline(ff["accuracy"], color="grey", ls="--", lw=1,
                   label="no recurrent weights (W = 0)")  # fmt: skip
    ax.axhline(result["chance"], color="grey", ls=":", lw=1, label="chance")
    entries = [r["routing_entries"] for r in result["rows"]]
    positive = [e for e in entries if e > 0]
    if positive and max(positive) > 20 * min(positive):
        if min(entries) == 0:
            ax.set_xscale("symlog", linthresh=10)
            ax.set_xlim(left=-1)  # the points at 0 off the frame
        else:
            ax.set_xscale("log")
    ax.set_xlabel("routing memory: entries programmed in the Routing Tiles (shared-path routing)")
    ax.set_ylabel("test accuracy (held-out trials)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc="lower right", title="filled marker: mappable", title_fontsize=7)
    ax.set_title(
        f"Synthetic burst-order task, NOT the paper's SHD result — {result['neurons']}-neuron "
        f"RSNN on {result['hardware']}",
        fontsize=9,
    )
    from engine.io.outputs import atomic_open

    with atomic_open(path, "wb", what="figure") as f:  # whole or not at all, a regular file
        fig.savefig(f, format=str(path).rsplit(".", 1)[-1].lower(), dpi=120)


def main(argv=None) -> None:
    """``python -m engine.mosaic.demo [--quick] [--figure PATH]``: print the rows."""
    import argparse
    import time

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--hardware", default="mosaic-8x8@3x3")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--figure", help="write the accuracy / routing memory figure here")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    result = run_demo(hardware=args.hardware, seed=args.seed, quick=args.quick)
    print(f"{result['task']}; {result['note']}; {result['hardware']}, {result['neurons']} "
          f"neurons; {time.perf_counter() - t0:.1f} s")  # fmt: skip
    keys = ("method", "setting", "accuracy", "connections", "routing_entries", "mappable",
            "max_rt_rows", "max_nt_rows")  # fmt: skip
    print(" | ".join(keys))
    for r in [*result["rows"], result["feedforward"]]:
        print(" | ".join(str(r[k]) for k in keys))
    if args.figure:
        figure(result, args.figure)


if __name__ == "__main__":
    main()
