"""What the commands share: the parser, progress on a terminal, output checks, and the
options that name a mapping."""

from __future__ import annotations

import argparse
import contextlib
import math
import shutil
import sys
from collections.abc import Iterable

from engine.defaults import DEFAULT_HARDWARE, DEFAULT_NETWORK
from engine.errors import SpecError
from engine.io.files import check_writable

__all__ = [
    "HARDWARE_HELP",
    "NETWORK_HELP",
    "PARTITION_HELP",
    "PLACEMENT_HELP",
    "Parser",
    "Steps",
    "bar",
    "build",
    "check_outputs",
    "mapping_options",
    "on_terminal",
    "seconds",
    "step_options",
    "whole",
    "work",
]

NETWORK_HELP = (
    f"workload spec (see 'meshscope list networks') or network file (default {DEFAULT_NETWORK})"
)
HARDWARE_HELP = (
    f"hardware preset, preset TOML file or mesh:WxH[xK][@CXxCY], any of them @RxC to resize it "
    f"to one chip of R x C routers (default {DEFAULT_HARDWARE})"
)
PARTITION_HELP = (
    "min, min+K, natural, cores:C1,C2,…, file:PATH or a partitioner "
    "(see 'meshscope list partitioners'; without it, the network's natural split, else min); "
    "a layer partition may name its split after @: min+1@rows"
)
PLACEMENT_HELP = "placer, or PLACER+force to refine it (see 'meshscope list placers')"


def whole(minimum: int, maximum: int | None = None):
    """An option's type: a whole number of at least ``minimum`` (and at most ``maximum``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum or (maximum is not None and value > maximum):
            within = f"from {minimum} to {maximum}" if maximum is not None else f"≥ {minimum}"
            raise argparse.ArgumentTypeError(f"must be {within}, not {value}")
        return value

    return parse


def seconds(text: str) -> float:
    """An option's type: a finite, positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"meshscope: error: {message} (see meshscope --help)\n")
        sys.exit(2)


def on_terminal(args) -> bool:
    """Progress is shown on a terminal, never when stderr is piped or with --json."""
    return sys.stderr.isatty() and not getattr(args, "json", False)


def bar(args, total: int, **kwargs):
    """A tqdm bar on stderr when on a terminal, else None."""
    if not on_terminal(args):
        return None
    from tqdm import tqdm

    ncols = shutil.get_terminal_size((100, 24)).columns or 100  # a 0-wide pty: 100 columns
    return tqdm(total=total, file=sys.stderr, ncols=min(ncols, 120), leave=False, **kwargs)


@contextlib.contextmanager
def work(args):
    """Around a command's work: on a terminal, say when numba compiles its kernels."""
    if not on_terminal(args):
        yield
        return
    from engine.kernels import compiling_notice

    with compiling_notice(lambda text: sys.stderr.write(f"meshscope: {text}\n")):
        yield


class Steps:
    """On a terminal, a bar over a command's steps (partition, place, evaluate …)."""

    def __init__(self, args, names: Iterable[str]):
        self.names = list(names)
        self.bar = bar(args, len(self.names), bar_format="{desc:<24} {bar} {n}/{total}")
        self.done = -1

    def __call__(self, name: str) -> None:
        """Step ``name`` starts (the steps before it are done)."""
        if self.bar is not None:
            done = self.names.index(name)
            self.bar.update(done - max(self.done, 0))
            self.bar.set_description_str(f"{name}…")
            self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


RATES_HELP = (
    "spike rates per population: a CSV 'population,rate' (spikes per neuron per step; e.g. a "
    "recorded trace's mean activity per NIR node)"
)


def check_outputs(*paths) -> None:
    """Fail before any work when an output path cannot be written."""
    for what, path in paths:
        if path:
            check_writable(path, what)


SPLIT_HELP = (
    "how layer partitions split each population into its cores: auto (default: tiles for "
    "layers a structured convolution feeds, natural order elsewhere), channels, rows, "
    "columns or tiles for every layer with a (C, H, W) shape, or per layer: conv1=rows,conv2=tiles"
)
EXPAND_HELP = (
    "expand structured convolutions into explicit synapses (neuron-level partitioners and "
    "convert do so themselves; refused above 50M synapses)"
)


def network_of(args):
    """The network ``--network`` names (the demo's by default), with ``--rates`` applied and,
    with ``--expand``, its structured convolutions expanded."""
    from engine.specs import DEFAULT_NETWORK, load_network_spec

    network = load_network_spec(args.network or DEFAULT_NETWORK)
    if getattr(args, "expand", False):
        network = network.explicit(why="--expand")
    if getattr(args, "rates", None):
        from engine.io.rates import read_rate_table, with_rates

        network = with_rates(network, read_rate_table(args.rates), where=args.rates)
    return network


def build(args, steps: Steps | None = None):
    """The ``Mapped`` the mapping options name (``engine.pipeline.build_mapping``)."""
    from engine.pipeline import build_mapping

    expand = getattr(args, "expand", False)
    network = network_of(args) if getattr(args, "rates", None) or expand else args.network
    if getattr(args, "mapping", None):
        if (args.partition or args.placement or getattr(args, "split", None)
                or getattr(args, "mesh_scheme", None)):  # fmt: skip
            raise SpecError(
                "give either --mapping or --partition/--placement/--split/--mesh-scheme, not both"
            )
        return build_mapping(network, args.hardware, mapping_file=args.mapping)
    return build_mapping(
        network,
        args.hardware,
        partition=args.partition or args.default_partition,
        placement=args.placement or args.default_placement,
        seed=args.seed,
        split=getattr(args, "split", None),
        progress=steps,
        mesh_scheme=getattr(args, "mesh_scheme", None),
    )


def network_argument(p, *, required: bool = False, help: str = NETWORK_HELP) -> None:
    """``--network`` and ``--no-cache`` (generated networks are cached on disk by spec)."""
    p.add_argument("--network", required=required, help=help)
    p.add_argument(
        "--no-cache", action="store_true",
        help="generate a workload again rather than read it from the on-disk cache of large "
        "generated networks (also MESHSCOPE_NO_CACHE=1)",
    )  # fmt: skip


def mapping_options(p, *, partition: str | None, placement: str):
    """The options that name a mapping; ``--partitioner``/``--placer`` are aliases."""
    network_argument(p)
    p.add_argument("--hardware", help=HARDWARE_HELP)
    p.add_argument("--rates", metavar="CSV", help=RATES_HELP)
    p.add_argument(
        "--partition", "--partitioner", dest="partition",
        help=PARTITION_HELP + (f" (default {partition})" if partition else ""),
    )  # fmt: skip
    p.add_argument(
        "--placement", "--placer", dest="placement", help=f"{PLACEMENT_HELP} (default {placement})"
    )
    p.add_argument("--split", metavar="SPLIT", help=SPLIT_HELP)
    p.add_argument(
        "--mesh-scheme", choices=("strict-area", "loose-area", "square"),
        help="after partitioning, size the mesh for the cores used (SENMap §IV-B) and place "
        "on it: the hardware becomes NAME@RxC, one chip of R x C routers",
    )  # fmt: skip
    p.add_argument("--expand", action="store_true", help=EXPAND_HELP)
    p.add_argument(
        "--seed", type=whole(0), default=0, help="seed of random partitioners and placers"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--save", metavar="FILE", help="write the mapping as a MeshScope mapping file")
    p.set_defaults(default_partition=partition, default_placement=placement)


def step_options(p) -> None:
    """How a time step is simulated (``simulate`` and ``evaluate --simulate``)."""
    from engine.simulate import MODES

    p.add_argument(
        "--mode", choices=MODES, default="pipelined",
        help="how the simulated step runs — pipelined: every layer sends in the same step "
        "(Loihi 2 mapping ES); fall-through: layer after layer (Loihi 2 runtime model §VII) "
        "(default pipelined)",
    )  # fmt: skip
    cast = p.add_mutually_exclusive_group()
    cast.add_argument(
        "--multicast", action="store_true",
        help="one message per spike, replicated where its routes part, in the model and the "
        "simulator (default: as the hardware's NoC does — one per destination core, but "
        "multicast on a preset whose links say so, e.g. seneca)",
    )  # fmt: skip
    cast.add_argument(
        "--unicast",
        action="store_true",
        help="one message per destination core, even on a multicast NoC",
    )


def multicast_of(args):
    """--multicast / --unicast as the engine takes it: True, False, or None (the hardware's)."""
    if getattr(args, "multicast", False):
        return True
    return False if getattr(args, "unicast", False) else None
