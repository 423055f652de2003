"""Partitioners, registered by name: ``partitioners[name](network, hardware, *, rng, **params)``.

The ``--partition`` grammar: ``min`` (fewest cores per population that satisfy every
limit, Loihi 2 mapping ES §3.1), ``min+K`` (K more cores per population), ``natural``
(a generated workload's own core split), ``cores:4,8,8,…`` (explicit cores per
population), ``greedy`` / ``greedy+cluster`` (each layer fills cores along its split; SENMap
§IV-A), ``file:PATH`` (a partition file of hMETIS/KaHyPar: one block per line), or
the name of any registered partitioner. A layer partition may name its split after ``@``
(``min+1@rows``, ``cores:4,8@conv1=rows,conv2=tiles``; ``engine.mapping.assignment.parse_split``),
as
``--split`` does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.errors import SpecError
from engine.hardware import Hardware
from engine.mapping.assignment import Partition, parse_split
from engine.mapping.resources import require_fewest_cores
from engine.model.network import Network
from engine.registry import Registry

__all__ = ["partitioners", "register", "make_partition", "parse_partition_spec", "default_spec"]

partitioners: Registry[Callable[..., Partition]] = Registry("partitioner")
register = partitioners.register
LAYERED = ("min", "layer", "natural", "cores", "greedy")  # split each population along its split


def parse_partition_spec(spec: str) -> tuple[str, dict]:
    """(registered name, parameters) of a ``--partition`` spec."""
    spec = spec.strip()
    if "@" in spec and not spec.startswith("file:"):
        spec, _, split = spec.rpartition("@")
        name, params = parse_partition_spec(spec)
        if name not in LAYERED:
            raise SpecError(
                f"bad partition {spec + '@' + split!r}: a split (@…) applies to layer partitions "
                f"({', '.join(LAYERED)}, min+K, cores:…), not to {name!r}"
            )
        return name, {**params, "split": parse_split(split) or "auto"}
    if spec.startswith("min+"):
        if not spec[4:].isdigit():
            raise SpecError(f"bad partition {spec!r}: write min+K with a whole number K")
        return "min", {"extra": int(spec[4:])}
    if spec.startswith("file:"):
        return "file", {"path": spec[5:]}
    if spec == "greedy+cluster":
        return "greedy", {"cluster": True}
    if spec.startswith("cores:"):
        try:
            cores = [int(v) for v in spec[6:].split(",")]
        except ValueError:
            raise SpecError(
                f"bad partition {spec!r}: write cores:4,8,8 (one count per population)"
            ) from None
        return "cores", {"cores": cores}
    partitioners[spec]  # an unknown name raises, listing the known ones
    return spec, {}


def default_spec(network: Network) -> str:
    """The partition a network gets when none is asked for: its natural split, or min."""
    return "natural" if network.natural_cores is not None else "min"


READS_PARTITION = ("file",)  # takes a partition as it is


def make_partition(
    network: Network, hardware: Hardware, spec: str | None = None, *, seed: int = 0, split=None
) -> Partition:
    """The partition a ``--partition`` spec names (``None``: the network's default).

    ``split``: how layer partitions split each population
    (``engine.mapping.assignment.parse_split``). Partitioners that work neuron by neuron get the
    network with its structured convolutions expanded (a clear error if they are too large for
    that).
    """
    name, params = parse_partition_spec(spec or default_spec(network))
    if "split" in params:  # ``min@rows``
        if split is not None:
            raise SpecError("give the split either after @ in the partition or with --split")
        at = params.pop("split")
        split = None if at == "auto" else at
    require_fewest_cores(network, hardware)  # before any partitioning: the totals alone say it
    if name in LAYERED:
        params["split"] = split
    elif split is not None:
        raise SpecError(
            f"--split applies to layer partitions ({', '.join(LAYERED)}, min+K, cores:…), "
            f"not to {name!r}"
        )
    elif name not in READS_PARTITION:
        network = network.explicit(why=f"the {name} partitioner")
    return partitioners[name](network, hardware, rng=np.random.default_rng(seed), **params)


from engine.mapping.partition import (  # noqa: E402,F401
    edgemap,
    greedy,
    layer,
    multilevel,
    overlap,
    sequential,
)
