"""The per-core resource model: what a core holds, and the one check against its limits.

A core holds neurons, inbound synapses, distinct inbound axons (the h-edges that reach
it) and the memory they take. Every partitioner, the partition graph, the
search and the explorer measure cores with the functions here and check them with
``overruns`` — the only place the limits of ``hardware.limits`` are compared.

The preset chooses how memory is counted (``hardware.model.memory_model``); ``memory_bytes``
is the one function that counts it, whichever the model.

``"loihi"`` (the default) follows Loihi's layout (Loihi 2 runtime model §II): a *sparse*
population stores one entry per synapse (weight bits plus an index); a *dense* one stores a
whole row of its core's weights per inbound axon, in synaptic-memory words. Every neuron also
keeps its state and spike buffer in the same memory (``neuron_state_bits + spike_buffer_bits``;
Loihi 2 mapping ES §3.1).

``"senmap"`` is SENMap eq. (1) (seed 002 §IV-C), a core's memory from its neurons, thresholds,
weights and biases (``senmap_memory_bytes``): every weight is one synapse at the network's
weight width, whatever the population's encoding.

The neuron-level partitioners count a neuron's own memory as a few synapse entries
(``Capacity.per_neuron``, rounded up, so what they build always fits).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.arrays import id_ranges
from engine.errors import CapacityError, NotEnoughCoresError
from engine.hardware import Hardware, load_hardware, preset_names
from engine.mapping.assignment import population_splits, split_rank
from engine.model.network import Network

__all__ = [
    "Capacity",
    "CoreUse",
    "Limit",
    "PopulationSplit",
    "capacity",
    "check_mapping",
    "limits",
    "mapping_violations",
    "memory_bytes",
    "memory_key",
    "neuron_bits",
    "overruns",
    "require_cores",
    "require_each_neuron_fits",
    "senmap_memory_bytes",
    "row_words",
    "synmem_words",
    "violations_by_population",
]


@dataclass(frozen=True)
class Limit:
    """One per-core limit: the ``CoreUse`` field it bounds, its words, its bound."""

    field: str
    what: str
    bound: int


@dataclass(frozen=True, eq=False)
class CoreUse:
    """What each core (partition) holds, one entry per core."""

    neurons: np.ndarray
    synapses: np.ndarray
    axons: np.ndarray  # distinct inbound axons
    memory_bytes: np.ndarray  # synaptic memory


def limits(hardware: Hardware) -> list[Limit]:
    """The per-core limits that apply on ``hardware`` (a synapse limit of 0 means none)."""
    lim = hardware.limits
    out = [
        Limit("neurons", "neurons", lim.neurons),
        Limit("memory_bytes", "bytes of core memory", lim.synaptic_memory_bytes),
        Limit("axons", "distinct inbound axons", lim.inbound_axons),
    ]
    if lim.synapses:
        out.append(Limit("synapses", "synapses", lim.synapses))
    return out


def overruns(use: CoreUse, hardware: Hardware) -> list[tuple[Limit, np.ndarray]]:
    """Every limit that some core breaks, with the mask of the cores that break it."""
    out = []
    for limit in limits(hardware):
        over = np.asarray(getattr(use, limit.field)) > limit.bound
        if over.any():
            out.append((limit, over))
    return out


def violations_by_population(
    use: CoreUse, hardware: Hardware, population: np.ndarray, names
) -> list[str]:
    """One line per (limit, population) broken, naming the partitions and what to do."""
    problems = []
    for limit, over in overruns(use, hardware):
        values = getattr(use, limit.field)
        for k in np.unique(population[over]):
            parts = np.flatnonzero(over & (population == k))
            name = names[k]
            which = (
                f"partition {parts[0]} ({name}) needs"
                if parts.size == 1
                else f"{parts.size} partitions of {name} ({id_ranges(parts)}) need up to"
            )
            problems.append(
                f"{which} {values[parts].max():.0f} {limit.what}, the core limit is "
                f"{limit.bound}: give {name} more cores or use hardware with larger cores"
            )
    return problems


def presets_that_fit(network: Network) -> list[str]:
    """The hardware presets whose cores ``network`` does not outnumber by ``fewest_cores``
    (what a "does not fit" message suggests instead), fewest cores first."""
    fit = []
    for name in preset_names():
        hw = load_hardware(name)
        if fewest_cores(network, hw)[0] <= hw.n_cores:
            fit.append((hw.n_cores, name))
    return [name for _, name in sorted(fit)]


def require_fewest_cores(network: Network, hardware: Hardware) -> None:
    """Raise ``NotEnoughCoresError`` when ``network``'s totals alone need more cores than
    ``hardware`` has (``fewest_cores``), naming the presets that would hold it."""
    need, why = fewest_cores(network, hardware)
    if need <= hardware.n_cores:
        return
    fit = presets_that_fit(network)
    instead = (
        f"choose larger hardware: by its totals it fits {' or '.join(fit[:2])}"
        if fit
        else "no preset fits: choose larger hardware (mesh:WxH[xK][@CXxCY] or a TOML file)"
    )
    raise NotEnoughCoresError(
        f"network {network.name!r} needs at least {need:,} cores ({why}); "
        f"{hardware.name} has {hardware.n_cores:,}: " + instead
    )


def require_cores(n_parts: int, hardware: Hardware, what: str) -> None:
    """Raise ``NotEnoughCoresError`` when ``n_parts`` partitions are more than the cores."""
    if n_parts > hardware.n_cores:
        raise NotEnoughCoresError(
            f"{what} needs {n_parts} cores; {hardware.name} has {hardware.n_cores}: "
            + (
                f"choose a larger Mosaic ({hardware.name.split('@')[0]}@RxC)"
                if hardware.tiles is not None
                else "choose larger hardware (e.g. loihi2-x8)"
            )
            + " or a partition with fewer cores"
        )


def fewest_cores(network: Network, hardware: Hardware) -> tuple[int, str]:
    """A lower bound on the cores any partition of ``network`` takes on ``hardware``, from
    its totals alone — (bound, what sets it). Summed over cores: every neuron on cores sits
    on one, every sparse synapse takes its entry and every neuron its state in some core's
    memory (SENMap eq. (1): every synapse its weight, every neuron its state, output,
    threshold and bias; the equation is a sum over a core's contents, so its total over the
    cores is the network's), every source neuron with a synapse is some core's inbound axon."""
    lim, model = hardware.limits, hardware.model
    on = int(network.on_cores.sum())
    fan_in, _ = network.synapses_per_population()
    if model.memory_model == "senmap":  # eq. (1) adds up over cores: its total, population-wise
        on_per_population = np.bincount(
            network.population[network.on_cores], minlength=network.n_populations
        )
        memory = float(
            senmap_memory_bytes(on_per_population, fan_in, network.weight_bits, model).sum()
        )
    else:  # sparse synapses and neuron state (a dense row per axon may take less than entries)
        bits = np.asarray(network.weight_bits) + model.sparse_index_bits
        sparse = np.asarray([e == "sparse" for e in network.encoding])
        memory = (fan_in * bits * sparse).sum() / 8.0
        memory += on * (model.neuron_state_bits + model.spike_buffer_bits) / 8.0
    axons = int((network.fan_out > 0).sum())  # explicit ones: a conv's sources not counted
    bounds = [
        (-(-on // lim.neurons), f"{on:,} neurons at most {lim.neurons:,} a core"),
        (int(np.ceil(memory / lim.synaptic_memory_bytes)),
         f"{memory / 2**20:,.1f} MiB of synapses and neuron state at most "
         f"{lim.synaptic_memory_bytes / 2**10:,.0f} KiB a core"),
        (-(-axons // lim.inbound_axons),
         f"{axons:,} neurons with synapses, each some core's inbound axon, at most "
         f"{lim.inbound_axons:,} a core"),
    ]  # fmt: skip
    if lim.synapses:
        total = int(fan_in.sum())
        bounds.append(
            (-(-total // lim.synapses), f"{total:,} synapses at most {lim.synapses:,} a core")
        )
    return max(bounds)


# ------------------------------------------------------------------ memory model
def memory_bytes(neurons, synapses, axons, weight_bits, dense, model) -> np.ndarray:
    """Memory of cores (bytes), as ``model.memory_model`` counts it.

    ``"loihi"``: a full weight row per axon (dense) or an entry per synapse (sparse), plus
    every neuron's state and spike buffer. ``"senmap"``: SENMap eq. (1)
    (``senmap_memory_bytes``; ``axons`` and ``dense`` do not enter it).
    """
    if model.memory_model == "senmap":
        return senmap_memory_bytes(neurons, synapses, weight_bits, model)
    word = model.synmem_word_bits
    row_words = -(-np.asarray(neurons) * weight_bits // word)
    sparse_bytes = np.asarray(synapses) * (weight_bits + model.sparse_index_bits) / 8.0
    synaptic = np.where(dense, np.asarray(axons) * row_words * (word // 8), sparse_bytes)
    per_neuron = (model.neuron_state_bits + model.spike_buffer_bits) / 8.0
    return (synaptic + np.asarray(neurons) * per_neuron).astype(float)


def senmap_memory_bytes(neurons, synapses, weight_bits, model) -> np.ndarray:
    """Memory of cores (bytes) by SENMap eq. (1) (seed 002 §IV-C), as we read it::

        M_pc = 2 × (N_npc + N_tpc × F_snn) × (BW_states + BW_outputs)
               + (N_wpc + N_bpc) × BW_weights                                  [bits]

    N_npc: the core's neurons; N_tpc = N_npc × ``thresholds_per_neuron``; F_snn: ``snn``
    (1 for a spiking network, 0 for an ANN); N_wpc: the core's inbound synapses, one weight
    each; N_bpc = N_npc × ``biases_per_neuron``; BW_states, BW_outputs: ``state_bits``,
    ``output_bits``; BW_weights (weights and biases): ``weight_bits``, the network's.
    Bytes = bits / 8.

    The paper prints ``2 × (N_npc + (N_tpc × F_snn) × (BW_states + BW_outputs)) + …``, which
    adds a count of neurons to a number of bits; we read the bit widths as multiplying the
    sum, so that every term is bits: each neuron (and, for an SNN, each threshold) keeps a
    state and an output, double-buffered (× 2, this step's and the next), and every weight
    and bias takes BW_weights. That reading is ours; the paper does not spell it out.
    """
    n_npc = np.asarray(neurons)
    n_tpc = n_npc * model.thresholds_per_neuron
    f_snn = 1 if model.snn else 0
    n_wpc = np.asarray(synapses)
    n_bpc = n_npc * model.biases_per_neuron
    bits = 2 * (n_npc + n_tpc * f_snn) * (model.state_bits + model.output_bits) + (
        n_wpc + n_bpc
    ) * np.asarray(weight_bits)
    return (bits / 8.0).astype(float)


def neuron_bits(model, weight_bits) -> np.ndarray:
    """The bits one neuron takes in its core's memory beside its synapses, by the preset's
    memory model (for neurons of ``weight_bits``-bit weights)."""
    if model.memory_model == "senmap":
        return senmap_memory_bytes(1, 0, weight_bits, model) * 8
    return np.asarray(model.neuron_state_bits + model.spike_buffer_bits)


def synmem_words(count, neurons, weight_bits, dense, model) -> np.ndarray:
    """Synaptic-memory words read when one axon's ``count`` synapses into a core fire.

    Dense: the core's whole weight row; sparse: the axon's entries, rounded up to words.
    """
    word = model.synmem_word_bits
    entry_bits = weight_bits + model.sparse_index_bits
    return np.where(
        dense, row_words(neurons, weight_bits, model), -(-np.asarray(count) * entry_bits // word)
    )


def row_words(neurons, weight_bits, model) -> np.ndarray:
    """Synaptic-memory words of a dense core's weight row: what one axon reads there."""
    return -(-np.asarray(neurons) * weight_bits // model.synmem_word_bits)


# ------------------------------------------------------------------ populations
class PopulationSplit:
    """One population's inbound synapses, ready to be split uniformly into ``c`` cores.

    ``use(c)`` is what each of the ``c`` cores would hold (one vectorized pass, plus one
    pass per core over a structured convolution's window), and ``violations(c)`` names the
    limits it would break; the minimum partition (Loihi 2 mapping ES) and the search's
    operators ask it before they split a layer. ``split``: the population's split
    (``engine.mapping.assignment.SPLITS``; default its ``auto`` split).
    """

    def __init__(self, network: Network, hardware: Hardware, k: int, split: str | None = None):
        members = network.members[k]
        self.size = members.size
        mode = split or population_splits(network)[k]
        self.rank = split_rank(network, k, mode)  # of each member, along the split
        rank = np.full(network.n_neurons, -1, dtype=np.int64)
        rank[members] = self.rank
        inbound = network.inbound[k]  # this population's synapses only, by source (CSR order)
        src, dst_rank = network.sources[inbound], rank[network.indices[inbound]]
        # each source's targets by rank, so a split's cores run in order within a source and
        # its axons (distinct sources a core) are where the core or the source changes
        first = np.ones(src.size, dtype=bool)
        np.not_equal(src[1:], src[:-1], out=first[1:])
        if np.any(np.diff(dst_rank)[~first[1:]] < 0):  # one int64 key: a lexsort is 5× slower
            key = src.astype(np.int64) * self.size + dst_rank
            key.sort()
            dst_rank = key % self.size
        self.dst_rank, self._first = dst_rank, first
        self.convolutions = [p for p in network.projections if p.target == k]
        self.weight_bits = network.weight_bits[k]
        self.dense = network.encoding[k] == "dense"
        self.hardware = hardware
        self._uses: dict[int, CoreUse] = {}  # the searches ask some counts twice

    def use(self, c: int) -> CoreUse:
        if c not in self._uses:
            self._uses[c] = self._use(c)
        return self._uses[c]

    def _use(self, c: int) -> CoreUse:
        core = self.dst_rank * c // self.size
        neurons = np.bincount(np.arange(self.size) * c // self.size, minlength=c)
        synapses = np.bincount(core, minlength=c)
        new = self._first.copy()  # a source's first synapse into each core
        np.logical_or(new[1:], core[1:] != core[:-1], out=new[1:])
        axons = np.bincount(core[new], minlength=c)
        for conv in self.convolutions:  # sources differ per projection: their axons add
            _, b, count = conv.counts(self.rank * c // self.size)
            synapses = synapses + np.bincount(b, weights=count, minlength=c).astype(np.int64)
            axons = axons + np.bincount(b, minlength=c)
        memory = memory_bytes(
            neurons, synapses, axons, self.weight_bits, self.dense, self.hardware.model
        )
        return CoreUse(neurons, synapses, axons, memory)

    def lower_bound(self, hardware: Hardware | None = None) -> int:
        """Fewest cores whose *average* load breaks no limit: no split into fewer fits (a
        core holds at least the average of each count, and memory grows with each), found
        without splitting anything. ``hardware``: another hardware's limits (one whose memory
        is counted as this one's: ``memory_key``)."""
        hardware = hardware or self.hardware
        total = self.dst_rank.size + sum(conv.n_synapses for conv in self.convolutions)

        def fits(c: int) -> bool:
            # counts: some core holds at least the rounded-up average of each; memory, linear
            # in both, is at least the memory of the average core (not of both maxima at once)
            n, s = np.array([-(-self.size // c)]), np.array([-(-total // c)])
            mem = memory_bytes(np.array([self.size / c]), np.array([total / c]),
                               np.zeros(1), self.weight_bits, self.dense,
                               self.hardware.model)  # fmt: skip
            return not overruns(CoreUse(n, s, np.zeros(1, np.int64), mem), hardware)

        lo, hi = 1, self.size
        if not fits(hi):
            return hi
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if fits(mid) else (mid + 1, hi)
        return lo

    def violations(self, c: int, hardware: Hardware | None = None) -> list[str]:
        """The limits a split into ``c`` cores breaks (of ``hardware``: another hardware
        whose memory is counted as this one's, ``memory_key``; a search over hardware
        variants shares the splits)."""
        use = self.use(c)
        return [
            f"{getattr(use, limit.field).max():.0f} {limit.what} > {limit.bound}"
            for limit, _ in overruns(use, hardware or self.hardware)
        ]


def memory_key(hardware: Hardware):
    """What a core's counts and memory depend on: hardware with equal keys share their
    ``PopulationSplit`` objects (the runtime model's times do not enter them)."""
    m = hardware.model
    return replace(m, dendop_ns=0.0, synop_ns=0.0, synmem_read_ns=0.0, barrier_us=0.0)


# ------------------------------------------------------------------ hypergraph partitioners
@dataclass(frozen=True)
class Capacity:
    """The limits as the neuron-level partitioners count them."""

    neurons: int  # C_npc
    axons: int  # C_apc
    synapses: int  # C_spc (the tighter of the synapse limit and synaptic memory)
    per_neuron: int = 0  # synapse entries each neuron's state and spike buffer take


def capacity(network: Network, hardware: Hardware, population: int | None = None) -> Capacity:
    """Per-core limits as node, distinct-inbound-h-edge and synapse counts.

    Core memory becomes a synapse count with the widest synapse entry of any population (a
    sparse entry; under SENMap eq. (1) a weight), and a neuron's own memory (``neuron_bits``,
    at the widest weights) the entries it would fill (rounded up); Loihi's dense encodings
    are checked on the finished partition. ``population``: the counts for cores of that
    population alone (its own weight width).
    """
    lim, model = hardware.limits, hardware.model
    index_bits = 0 if model.memory_model == "senmap" else model.sparse_index_bits
    widest = max(network.weight_bits) if population is None else network.weight_bits[population]
    entry_bits = widest + index_bits
    by_memory = lim.synaptic_memory_bytes * 8 // entry_bits
    synapses = min(lim.synapses, by_memory) if lim.synapses else by_memory
    per_neuron = -(-int(np.ceil(neuron_bits(model, widest))) // entry_bits)
    return Capacity(lim.neurons, lim.inbound_axons, int(synapses), int(per_neuron))


def require_each_neuron_fits(
    network: Network, cap: Capacity, axons: np.ndarray, synapses: np.ndarray
) -> None:
    """Raise naming the first neuron whose inbound axons or synapses alone exceed a core
    (``synapses`` counting its own state as ``cap.per_neuron`` entries)."""
    bad = np.flatnonzero((axons > cap.axons) | (synapses > cap.synapses))
    if bad.size:
        v = int(bad[0])
        raise CapacityError(
            f"neuron {v} of {network.name!r} alone exceeds a core's limits ({axons[v]} "
            f"inbound axons, {synapses[v]} inbound synapses; limits: {cap.axons} axons, "
            f"{cap.synapses} synapses): choose hardware with larger cores"
        )


# ------------------------------------------------------------------ mappings
def mapping_violations(network, hardware, mapping, graph, limit: int = 12) -> list[str]:
    """Every reason ``mapping`` (with its partition graph) cannot run, one line each.

    At most ``limit`` lines, then a count of the rest.
    """
    part = mapping.partition
    if part.assignment.shape[0] != network.n_neurons:
        return [
            f"the partition covers {part.assignment.shape[0]} neurons; "
            f"network {network.name!r} has {network.n_neurons}"
        ]
    problems = []
    if part.n_parts > hardware.n_cores:
        problems.append(
            f"{part.n_parts} partitions need {part.n_parts} cores; {hardware.name} has "
            f"{hardware.n_cores}: use bigger hardware or fewer cores per population"
        )
    problems += mapping.placement.check(hardware, part.n_parts)
    problems += graph.limit_violations(hardware)
    if len(problems) > limit:
        problems = problems[:limit] + [f"… and {len(problems) - limit} more"]
    return problems


def check_mapping(network, hardware, mapping, graph) -> None:
    """Raise ``CapacityError`` with every reason when ``mapping`` cannot run."""
    problems = mapping_violations(network, hardware, mapping, graph)
    if problems:
        raise CapacityError(
            f"mapping of {network.name!r} on {hardware.name} is infeasible: " + "; ".join(problems)
        )
