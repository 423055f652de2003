"""Network: a spiking neural network as a neuron-level directed hypergraph.

Every neuron ``s`` owns one h-edge (its axon): the destination neurons
``indices[indptr[s]:indptr[s + 1]]``. Neurons belong to populations (the layers of a
layered network) and spike with a probability ``rate[s]`` per time step. Everything
stays neuron-level so every partitioner can work on it (SNN hypergraphs §II–III).

Synapses are explicit (the CSR) or *structured*: a ``ConvProjection``
(``engine.model.projection``) keeps a large convolution as its kernel and geometry, and the
partition statistics are computed from that description; ``explicit()`` expands them.
The CSR then holds every other synapse, never one of a structured projection's
population pairs. ``n_synapses`` counts both.

A population may be a *spike source* (a network's input layer, a NIR ``Input``): its
neurons spike and have synapses, but they run on no core — their spikes enter the mesh at
the hardware's input port (``Hardware.input_core``). A spike source receives no synapses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property

import numba
import numpy as np

from engine import host
from engine.errors import CapacityError, InvalidNetworkError
from engine.model.projection import ConvProjection

__all__ = ["Network", "ENCODINGS"]

ENCODINGS = ("sparse", "dense")


@numba.njit(cache=True, nogil=True)
def _scatter_rows(src, dst, w, fill, indices, weights):
    """Synapse i goes to the next free slot of row ``src[i]`` (``fill``: each row's next slot)."""
    for i in range(src.size):
        k = fill[src[i]]
        indices[k] = dst[i]
        if weights is not None:
            weights[k] = w[i]
        fill[src[i]] = k + 1


@numba.njit(cache=True, nogil=True)
def _sort_rows(indptr, indices, weights):
    """Each row's targets in ascending order (weights alongside); sorted rows are left as is."""
    for r in range(indptr.size - 1):
        a, b = indptr[r], indptr[r + 1]
        for k in range(a + 1, b):
            if indices[k] < indices[k - 1]:
                order = np.argsort(indices[a:b], kind="mergesort")
                indices[a:b] = indices[a:b][order]
                if weights is not None:
                    weights[a:b] = weights[a:b][order]
                break


@dataclass(frozen=True, eq=False)
class Network:
    """A directed hypergraph in CSR form with populations and spike rates.

    Parameters
    ----------
    name : canonical spec of the network (``"linear-dense:M=4,N=64"``) or a file stem.
    indptr, indices : CSR over source neurons; row ``s`` lists the destinations of ``s``.
    population : population id of every neuron.
    population_names : one name per population, in order (layers: input first).
    rate : probability of spiking per step for every neuron, in [0, 1].
    weights : optional weight per synapse; synapses of weight 0 are not stored.
    weight_bits : synaptic weight precision per (destination) population.
    encoding : ``"sparse"`` or ``"dense"`` synapse encoding per (destination) population.
    natural_cores : the workload's own cores per population, if it has one (0 for a
        spike source).
    spike_source : per population, whether it is a spike source (no cores; its spikes
        enter at the hardware's input port). Default: none is.
    shapes : per population, its shape (a conv layer's (C, H, W)); default (neurons,).
        Neuron ``i`` of a population (in id order) is entry ``i`` of its shape in C order.
    projections : structured synapses (``ConvProjection``), beside the CSR's.
    description : one line for listings.
    """

    name: str
    indptr: np.ndarray
    indices: np.ndarray
    population: np.ndarray
    population_names: tuple[str, ...]
    rate: np.ndarray
    weights: np.ndarray | None = None
    weight_bits: tuple[int, ...] | None = None
    encoding: tuple[str, ...] | None = None
    natural_cores: tuple[int, ...] | None = None
    spike_source: tuple[bool, ...] | None = None
    shapes: tuple[tuple[int, ...], ...] | None = None
    projections: tuple[ConvProjection, ...] = ()
    description: str = ""
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        put = object.__setattr__
        put(self, "indptr", self._integers("indptr", np.int64))
        put(self, "indices", self._integers("indices", np.int32))
        put(self, "population", self._integers("population", np.int32))
        put(self, "rate", np.ascontiguousarray(self.rate, dtype=np.float64))
        put(self, "population_names", tuple(str(p) for p in self.population_names))
        if self.weights is not None:
            put(self, "weights", np.ascontiguousarray(self.weights, dtype=np.float32))
        n_pop = len(self.population_names)
        put(self, "weight_bits", tuple(int(b) for b in (self.weight_bits or (8,) * n_pop)))
        put(self, "encoding", tuple(str(e) for e in (self.encoding or ("sparse",) * n_pop)))
        if self.natural_cores is not None:
            put(self, "natural_cores", tuple(int(c) for c in self.natural_cores))
        put(self, "spike_source", tuple(bool(v) for v in (self.spike_source or (False,) * n_pop)))
        if self.shapes is not None:
            put(self, "shapes", tuple(tuple(int(v) for v in s) for s in self.shapes))
        put(self, "projections", tuple(self.projections))
        self._validate()
        if self.weights is not None and np.any(self.weights == 0):
            self._drop_zero_weights()  # after validation: it relies on a consistent CSR

    def _integers(self, what: str, dtype) -> np.ndarray:
        """An index array as ``dtype``, refusing fractions and values ``dtype`` cannot hold."""
        a = np.asarray(getattr(self, what))
        if a.size and not np.issubdtype(a.dtype, np.integer):
            raise InvalidNetworkError(
                f"network {self.name!r}: {what} must hold integers, not {a.dtype} values"
            )
        out = np.ascontiguousarray(a, dtype=dtype)
        if a.dtype != out.dtype and not np.array_equal(a, out):
            raise InvalidNetworkError(
                f"network {self.name!r}: {what} holds values outside the {out.dtype} range"
            )
        return out

    def _drop_zero_weights(self):
        """Synapses of weight 0 are not stored (sparse encoding skips them)."""
        keep = self.weights != 0
        row = np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))
        counts = np.bincount(row[keep], minlength=self.indptr.size - 1)
        object.__setattr__(self, "indptr", np.concatenate([[0], np.cumsum(counts)]))
        object.__setattr__(self, "indices", self.indices[keep])
        object.__setattr__(self, "weights", self.weights[keep])

    # ------------------------------------------------------------------ checks
    def _validate(self):
        def bad(msg):
            raise InvalidNetworkError(f"network {self.name!r}: {msg}")

        n = self.rate.shape[0]
        if self.indptr.ndim != 1 or self.indptr.shape[0] != n + 1:
            bad(f"indptr has {self.indptr.shape[0]} entries, expected n_neurons + 1 = {n + 1}")
        if n == 0:
            bad("it has no neurons")
        if self.indptr[0] != 0 or self.indptr[-1] != self.indices.shape[0]:
            bad("indptr must start at 0 and end at len(indices)")
        if np.any(np.diff(self.indptr) < 0):
            bad("indptr must be non-decreasing")
        if self.indices.size and (self.indices.min() < 0 or self.indices.max() >= n):
            bad(f"a synapse targets a neuron outside 0..{n - 1}")
        if self.population.shape != (n,):
            bad(f"population has {self.population.shape[0]} entries for {n} neurons")
        n_pop = len(self.population_names)
        if n_pop == 0 or self.population.min() < 0 or self.population.max() >= n_pop:
            bad(f"population ids must lie in 0..{n_pop - 1} (one name per population)")
        if not np.all(np.isfinite(self.rate)) or self.rate.min() < 0 or self.rate.max() > 1:
            bad("rates are spike probabilities per step and must lie in [0, 1]")
        if self.weights is not None and self.weights.shape != self.indices.shape:
            bad(f"{self.weights.shape[0]} weights for {self.indices.shape[0]} synapses")
        if len(self.weight_bits) != n_pop or any(not 1 <= b <= 64 for b in self.weight_bits):
            bad("weight_bits needs one value in 1..64 per population")
        if len(self.encoding) != n_pop or any(e not in ENCODINGS for e in self.encoding):
            bad(f"encoding needs one of {ENCODINGS} per population")
        if len(self.spike_source) != n_pop:
            bad(f"spike_source needs one flag per population, not {len(self.spike_source)}")
        if all(self.spike_source):
            bad("every population is a spike source; at least one must run on cores")
        src = np.asarray(self.spike_source)
        if src.any() and self.indices.size:
            fed = np.bincount(self.population[self.indices], minlength=n_pop) > 0
            hit = np.flatnonzero(src & fed)
            if hit.size:
                bad(
                    f"population {self.population_names[hit[0]]!r} is a spike source and "
                    "receives synapses; a spike source runs on no core, so nothing can feed it"
                )
        if self.natural_cores is not None and (
            len(self.natural_cores) != n_pop
            or any((c < 1) != s for c, s in zip(self.natural_cores, src.tolist(), strict=True))
        ):
            bad(
                "natural_cores needs one core count per population, positive for a population "
                "on cores and 0 for a spike source"
            )

        self._validate_structure(bad)

    def _validate_structure(self, bad):
        sizes = np.bincount(self.population, minlength=self.n_populations)
        if self.shapes is not None and (
            len(self.shapes) != self.n_populations
            or any(int(np.prod(s)) != n for s, n in zip(self.shapes, sizes.tolist(), strict=True))
        ):
            bad("shapes needs one shape per population, holding as many neurons as it has")
        pairs = set()
        for p in self.projections:
            if not isinstance(p, ConvProjection):
                bad(f"a structured projection must be a ConvProjection, not {type(p).__name__}")
            if not (0 <= p.source < self.n_populations and 0 <= p.target < self.n_populations):
                bad(f"a convolution joins populations {p.source}->{p.target}, outside the network")
            names = self.population_names
            where = f"the convolution {names[p.source]!r} -> {names[p.target]!r}"
            if (p.n_in, p.n_out) != (sizes[p.source], sizes[p.target]):
                bad(
                    f"{where} takes {p.n_in} and gives {p.n_out} neurons; the populations have "
                    f"{sizes[p.source]} and {sizes[p.target]}"
                )
            if self.spike_source[p.target]:
                bad(f"{where} feeds a spike source, which runs on no core")
            if (p.source, p.target) in pairs:
                bad(f"{where} is given twice; one projection per population pair")
            pairs.add((p.source, p.target))
        if pairs and self.indices.size:
            n_pop = self.n_populations
            key = (
                self.population[self.sources].astype(np.int64) * n_pop
                + self.population[self.indices]
            )
            both = np.intersect1d(key, [s * n_pop + t for s, t in pairs])
            if both.size:
                s, t = divmod(int(both[0]), n_pop)
                bad(
                    f"population pair {self.population_names[s]!r} -> "
                    f"{self.population_names[t]!r} has explicit and structured synapses"
                )

    # ------------------------------------------------------------- properties
    @property
    def n_neurons(self) -> int:
        """Every neuron, the spike sources' (inputs) included."""
        return int(self.rate.shape[0])

    @property
    def n_input_neurons(self) -> int:
        """The neurons of spike-source populations: inputs, which run on no core."""
        return int(np.asarray(self.population_sizes)[list(self.spike_source)].sum())

    @property
    def n_core_neurons(self) -> int:
        """The neurons that run on cores (every neuron but the inputs)."""
        return self.n_neurons - self.n_input_neurons

    def neuron_count_text(self) -> str:
        """'11,264 neurons on cores and 1,024 inputs' (no inputs: '11,264 neurons')."""
        text = f"{self.n_core_neurons:,} neurons"
        if self.n_input_neurons:
            text += f" on cores and {self.n_input_neurons:,} inputs"
        return text

    @property
    def n_synapses(self) -> int:
        """Every synapse, explicit and structured."""
        return int(self.indices.shape[0]) + sum(p.n_synapses for p in self.projections)

    @property
    def n_explicit(self) -> int:
        """The synapses the CSR lists."""
        return int(self.indices.shape[0])

    @property
    def structured(self) -> bool:
        return bool(self.projections)

    def shape_of(self, k: int) -> tuple[int, ...]:
        """Population ``k``'s shape ((neurons,) unless given)."""
        return self.shapes[k] if self.shapes is not None else (int(self.population_sizes[k]),)

    @cached_property
    def members(self) -> tuple[np.ndarray, ...]:
        """Per population, its neurons' ids in ascending order."""
        order = np.argsort(self.population, kind="stable")
        return tuple(np.split(order, np.cumsum(self.population_sizes)[:-1]))

    @cached_property
    def inbound(self) -> tuple[np.ndarray, ...]:
        """Per population, its listed inbound synapses (positions in ``indices``, ascending):
        one sort of every synapse by its target's population, instead of a pass over all
        of them per population."""
        target = self.population[self.indices]
        small = np.min_scalar_type(max(self.n_populations - 1, 0))
        order = np.argsort(target.astype(small), kind="stable")  # a radix sort for small ints
        dtype = np.int32 if self.indices.size < 2**31 else np.int64
        counts = np.bincount(target, minlength=self.n_populations)
        return tuple(np.split(order.astype(dtype), np.cumsum(counts)[:-1]))

    def synapses_per_population(self) -> tuple[np.ndarray, np.ndarray]:
        """(inbound, outbound) synapses of every population, structured ones included."""
        n_pop = self.n_populations
        fan_in = np.bincount(self.population[self.indices], minlength=n_pop)
        fan_out = np.bincount(self.population, weights=self.fan_out, minlength=n_pop)
        fan_out = fan_out.astype(np.int64)
        for p in self.projections:
            fan_in[p.target] += p.n_synapses
            fan_out[p.source] += p.n_synapses
        return fan_in, fan_out

    def explicit(self, *, limit: int | None = None, why: str = "") -> Network:
        """The same network with every structured projection expanded into the CSR.

        The CSR is built in place, a projection at a time, so the peak is the expanded CSR
        (``explicit_bytes``: 4 bytes a synapse, 8 with weights) plus one projection's
        expansion. ``CapacityError`` before anything is allocated if that is more than
        ``limit`` bytes (default: the memory this machine has available); ``why`` says who
        asks.
        """
        if not self.projections:
            return self
        need = self.explicit_bytes()
        limit = host.available_memory() if limit is None else limit
        if need > limit:
            big = max(self.projections, key=lambda p: p.n_synapses)
            names = self.population_names
            raise CapacityError(
                f"network {self.name!r} has {self.n_synapses:,} synapses "
                f"({names[big.source]!r} -> {names[big.target]!r} alone {big.n_synapses:,}, "
                f"kept as a convolution); {why or 'expanding them'} needs them explicit, about "
                f"{need / 2**30:.1f} GiB, more than the {limit / 2**30:.1f} GiB available. Use a "
                "layer partition (--partition min, min+K or cores:…, with --split), which works "
                "on the convolutions as they are"
            )
        n = self.n_neurons
        counts = np.diff(self.indptr)
        for p in self.projections:  # each source neuron's row length
            counts[self.members[p.source]] += p.fan_out()
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        weights = None if self._unit_weights else np.empty(indices.size, dtype=np.float32)
        fill = indptr[:-1].copy()
        own = self.weights  # the listed synapses' weights: 1 unless given, none if unit
        if own is None:
            own = np.ones(0 if weights is None else self.n_explicit, np.float32)
        _scatter_rows(self.sources, self.indices, own, fill, indices, weights)
        for p in self.projections:
            s, d, w = p.expand()
            _scatter_rows(self.members[p.source][s], self.members[p.target][d], w, fill,
                          indices, weights)  # fmt: skip
            del s, d, w
        _sort_rows(indptr, indices, weights)
        return replace(self, indptr=indptr, indices=indices, weights=weights, projections=())

    @property
    def _unit_weights(self) -> bool:
        """Whether every synapse, listed or structured, has weight 1 (explicit() stores none)."""
        return self.weights is None and all(p.unit_weights for p in self.projections)

    def explicit_bytes(self) -> int:
        """Peak bytes of ``explicit()``: the expanded CSR (a 4-byte target a synapse, and a
        4-byte weight unless every weight is 1) and the largest projection's expansion (two
        8-byte indices, a weight and two 8-byte global indices a synapse, twice over while
        its taps are joined)."""
        largest = max((p.n_synapses for p in self.projections), default=0)
        per_synapse = 4 if self._unit_weights else 8
        return self.n_synapses * per_synapse + 16 * (self.n_neurons + 1) + largest * 56

    @property
    def n_populations(self) -> int:
        return len(self.population_names)

    @cached_property
    def population_sizes(self) -> np.ndarray:
        return np.bincount(self.population, minlength=self.n_populations)

    @cached_property
    def core_populations(self) -> np.ndarray:
        """Ids of the populations that run on cores (every one but the spike sources)."""
        return np.flatnonzero(~np.asarray(self.spike_source, dtype=bool))

    @cached_property
    def on_cores(self) -> np.ndarray:
        """Per neuron: whether it runs on a core (False for a spike source's neurons)."""
        return ~np.asarray(self.spike_source, dtype=bool)[self.population]

    @property
    def has_spike_sources(self) -> bool:
        return any(self.spike_source)

    @cached_property
    def sources(self) -> np.ndarray:
        """Source neuron of every synapse (the CSR row expanded)."""
        return np.repeat(np.arange(self.n_neurons, dtype=np.int32), np.diff(self.indptr))

    @cached_property
    def fan_out(self) -> np.ndarray:
        return np.diff(self.indptr)

    @cached_property
    def fingerprint(self) -> str:
        """A short hash of the arrays that define the network (not of its name)."""
        h = hashlib.sha256()
        for a in (self.indptr, self.indices, self.population, self.rate):
            h.update(a.tobytes())
        if self.weights is not None:
            h.update(self.weights.tobytes())
        h.update(repr((self.population_names, self.weight_bits, self.encoding)).encode())
        if self.has_spike_sources:  # (networks without them keep their earlier fingerprints)
            h.update(repr(self.spike_source).encode())
        for p in self.projections:
            h.update(repr(p.describe()).encode())
            h.update(p.weight.tobytes())
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        """What ``meshscope info`` prints: the neurons on cores and the spike sources' (on no
        core) apart, the synapses (one per non-zero weight of the expanded projections), and
        one row per population: its type and shape (a NIR node's, if read from NIR), neurons,
        synapses in and out, whether it is a spike source, and its mean rate."""
        fan_in, fan_out = self.synapses_per_population()
        nir = self.params.get("nir", {})
        rows = []
        for k, name in enumerate(self.population_names):
            node = nir.get(name, {})
            rows.append(
                {
                    "name": name,
                    "type": node.get("type", "spike source" if self.spike_source[k] else "layer"),
                    "shape": node.get("shape", list(self.shape_of(k))),
                    "neurons": int(self.population_sizes[k]),
                    "synapses_in": int(fan_in[k]),
                    "synapses_out": int(fan_out[k]),
                    "spike_source": bool(self.spike_source[k]),
                    "mean_rate": float(self.rate[self.population == k].mean()),
                }
            )
        return {
            "network": self.name,
            "neurons": self.n_core_neurons,  # on cores
            "input_neurons": self.n_input_neurons,  # spike sources: on no core
            "synapses": self.n_synapses,
            "populations": rows,
            "description": self.description,
        }
