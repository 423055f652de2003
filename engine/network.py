"""Network: a spiking neural network as a neuron-level directed hypergraph.

Every neuron ``s`` owns one h-edge (its axon): the destination neurons
``indices[indptr[s]:indptr[s + 1]]``. Neurons belong to populations (the layers of a
layered network) and spike with a probability ``rate[s]`` per time step. Everything
stays neuron-level so every partitioner can work on it (SNN hypergraphs §II–III).

A population may be a *spike source* (a network's input layer, a NIR ``Input``): its
neurons spike and have synapses, but they run on no core — their spikes enter the mesh at
the hardware's input port (``Hardware.input_core``). A spike source receives no synapses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.errors import InvalidNetworkError

__all__ = ["Network", "ENCODINGS"]

ENCODINGS = ("sparse", "dense")


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

    # ------------------------------------------------------------- properties
    @property
    def n_neurons(self) -> int:
        return int(self.rate.shape[0])

    @property
    def n_synapses(self) -> int:
        return int(self.indices.shape[0])

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
        return h.hexdigest()[:16]

    def summary(self) -> dict:
        return {
            "name": self.name,
            "neurons": self.n_neurons,
            "synapses": self.n_synapses,
            "populations": dict(
                zip(self.population_names, self.population_sizes.tolist(), strict=True)
            ),
            "mean_rate": float(self.rate.mean()),
            "spike_sources": [
                n for n, s in zip(self.population_names, self.spike_source, strict=True) if s
            ],
            "description": self.description,
        }
