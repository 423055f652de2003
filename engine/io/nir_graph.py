"""Read a NIR graph (the Neuromorphic Intermediate Representation, ``.nir``) as a Network.

snnTorch, Norse, Sinabs, Rockpool, Lava-dl and SpikingJelly export NIR: a graph of nodes
(neurons, weights, convolutions, pools, reshapes, delays) and the edges between them. Here:

* every neuron node (``I``, ``IF``, ``LI``, ``LIF``, ``CubaLI``, ``CubaLIF``, ``Threshold``) is
  a population of as many neurons as its shape holds, named by its node;
* every ``Input`` node is a population too, a *spike source*: it runs on no core, its spikes
  enter the mesh at the hardware's input port; ``Output`` nodes need nothing;
* the nodes between neuron nodes (``Affine``, ``Linear``, ``Scale``, ``Conv1d``, ``Conv2d``,
  ``SumPool2d``, ``AvgPool2d``, ``Flatten``, ``Delay``) compose into the synapses between
  the populations they join: each is a linear map, the maps of a path multiply (a pool after
  a conv is part of the same projection), parallel paths add. Biases feed no synapse; a
  delay changes when a spike arrives, not where;
* nested ``NIRGraph`` nodes are inlined (their nodes named ``outer.inner``), recurrent edges
  kept.

Shapes are inferred from the ``Input`` nodes forward — what a node's parameters imply
(a conv's geometry, a neuron's parameter arrays) is checked against what reaches it rather
than trusted from ``input_type``. A convolution (with the pools after it) of more than
``EXPAND_ABOVE`` synapses stays structured (``engine.model.projection.ConvProjection``: its
kernel and geometry, never its synapses one by one); every other projection is explicit
(CSR), built with sparse products, and a graph whose explicit synapses would exceed
``max_synapses`` is refused with the layer to blame. A file that fails nir's own type
check is read again without it, with a warning.

Spike rates: ``rates`` maps population (node) names to spike probabilities per step, one per
population or one per neuron (``engine.io.rates.rates_from_trace`` turns a recorded
``nir.NIRGraphData`` into those); populations it does not name get ``DEFAULT_RATE``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from engine.errors import CapacityError, InputFileError, MeshScopeWarning, SpecError
from engine.io.files import MAX_NESTING, ReadLimits, open_regular
from engine.io.rates import with_rates
from engine.model.network import Network
from engine.model.projection import ConvProjection

__all__ = ["DEFAULT_RATE", "EXPAND_ABOVE", "MAX_SYNAPSES", "NIR_VERSION", "NirWarning", "read_nir"]

NIR_VERSION = "1.0.8"  # the nir package this reader is tested with (pinned in pyproject.toml)
DEFAULT_RATE = 0.1  # spikes per neuron per step where no trace says otherwise (illustrative)
MAX_SYNAPSES = 50_000_000  # explicit synapses a graph may expand to (about 0.6 GB of CSR)
MAX_HDF5_OBJECTS = 100_000  # groups and arrays of a NIR file (a node takes a few)
PRODUCT_WORK = 16  # a path's maps multiply with at most this many × max_synapses products
EXPAND_ABOVE = 1_000_000  # a convolution with more synapses stays structured (by default)

NEURONS = ("I", "IF", "LI", "LIF", "CubaLI", "CubaLIF", "Threshold")
MAPS = (
    "Affine",
    "Linear",
    "Scale",
    "Conv1d",
    "Conv2d",
    "SumPool2d",
    "AvgPool2d",
    "Flatten",
    "Delay",
)
POOLS = ("SumPool2d", "AvgPool2d")
_PARAMS = (
    "tau",
    "tau_mem",
    "tau_syn",
    "r",
    "v_leak",
    "v_threshold",
    "v_reset",
    "w_in",
    "threshold",
)


class NirWarning(MeshScopeWarning):
    """Something about a NIR file MeshScope read past (said once, on reading)."""


@dataclass
class _Node:
    name: str
    kind: str  # the NIR class name
    node: object  # the nir node
    shape: tuple | None = None  # output shape, once known


# ------------------------------------------------------------------ reading
def _read_graph(path: Path, max_bytes: int):
    import nir

    with open_regular(path, "NIR file", max_bytes) as f:
        if f.read(8) != b"\x89HDF\r\n\x1a\n":
            raise InputFileError(
                f"{path} is not a NIR file: NIR files are HDF5, this one is not (write one "
                "with nir.write from the framework the network was built in)"
            )
        _check_hdf5(f, path, max_bytes)
        try:
            return nir.read(f)
        except ValueError as e:
            if "type" not in str(e).lower() or "edge" in str(e).lower():
                raise InputFileError(f"{path}: {_one_line(e)}") from None
            first = _one_line(e)
        except Exception as e:  # noqa: BLE001 - whatever nir and h5py raise, the file is bad
            raise InputFileError(f"{path}: not a readable NIR graph ({_one_line(e)})") from None
        try:
            graph = nir.read(f, type_check=False)
        except Exception as e:  # noqa: BLE001 - as above
            raise InputFileError(f"{path}: {_one_line(e)}") from None
    warnings.warn(
        f"{path} fails nir's own type check ({first}); read without it, shapes inferred here",
        NirWarning,
        stacklevel=3,
    )
    return graph


def _check_hdf5(f, path: Path, max_bytes: int) -> None:
    """That an HDF5 file holds what a NIR graph can: groups nested at most ``MAX_NESTING``
    deep, at most ``MAX_HDF5_OBJECTS`` groups and arrays, arrays of at most ``max_bytes``
    together (their declared shapes, before any is read: a compressed array can inflate
    far beyond its file), and no links — to another file, which the server would open, or
    within this one, which may loop."""
    import h5py

    try:
        with h5py.File(f, "r") as h5:
            stack, count, total = [(h5, 0)], 0, 0
            while stack:
                group, depth = stack.pop()
                if depth >= MAX_NESTING:
                    raise InputFileError(
                        f"{path}: its groups nest more than {MAX_NESTING} deep; a NIR graph "
                        "nests a few"
                    )
                for key in group:
                    count += 1
                    if count > MAX_HDF5_OBJECTS:
                        raise InputFileError(
                            f"{path}: more than {MAX_HDF5_OBJECTS:,} groups and arrays; not a "
                            "NIR graph MeshScope reads"
                        )
                    if not isinstance(group.get(key, getlink=True), h5py.HardLink):
                        raise InputFileError(
                            f"{path}: {group.name}/{key} is a link; NIR graphs hold no links"
                        )
                    item = group[key]
                    if isinstance(item, h5py.Group):
                        stack.append((item, depth + 1))
                    elif isinstance(item, h5py.Dataset):
                        total += math.prod(item.shape or ()) * item.dtype.itemsize
                        if total > max_bytes:
                            raise InputFileError(
                                f"{path}: its arrays hold more than the {max_bytes:,} bytes read "
                                f"here ({item.name}: shape {item.shape}, {item.dtype})"
                            )
    except InputFileError:
        raise
    except Exception:  # noqa: BLE001 - whatever h5py raises, the file is bad
        raise InputFileError(
            f"{path}: not a readable NIR graph: its HDF5 structure is damaged or cut short "
            "(export it again from your SNN library)"
        ) from None
    finally:
        f.seek(0)


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _flatten_graph(graph, prefix: str = "") -> tuple[dict[str, _Node], list[tuple[str, str]]]:
    """Nodes and edges with every nested NIRGraph inlined (``outer.inner`` names). An edge to
    a subgraph goes to its Input nodes (or the one it names), one from it leaves its Outputs."""
    nodes: dict[str, _Node] = {}
    edges: list[tuple[str, str]] = []
    inner: dict[str, tuple[list[str], list[str]]] = {}  # subgraph -> (its inputs, its outputs)
    for name, node in graph.nodes.items():
        full = prefix + str(name)
        kind = type(node).__name__
        if kind == "NIRGraph":
            sub_nodes, sub_edges = _flatten_graph(node, full + ".")
            ins = [
                n
                for n, v in sub_nodes.items()
                if v.kind == "Input" and n.count(".") == full.count(".") + 1
            ]
            outs = [
                n
                for n, v in sub_nodes.items()
                if v.kind == "Output" and n.count(".") == full.count(".") + 1
            ]
            for n in ins + outs:  # the subgraph's own ports pass values through
                sub_nodes[n].kind = "Pass"
            nodes.update(sub_nodes)
            edges += sub_edges
            inner[full] = (ins, outs)
        else:
            nodes[full] = _Node(full, kind, node)

    def ends(name: str, outgoing: bool) -> list[str]:
        full = prefix + str(name)
        if full in inner:
            return inner[full][1] if outgoing else inner[full][0]
        return [full]

    for src, dst in graph.edges:
        for s in ends(src, True):
            for d in ends(dst, False):
                edges.append((s, d))
    return nodes, edges


# ------------------------------------------------------------------ shapes
def _param_shape(node) -> tuple | None:
    """The shape a neuron node's parameter arrays give it (None if they are all scalars)."""
    shapes = [
        tuple(int(v) for v in np.shape(getattr(node, p)))
        for p in _PARAMS
        if hasattr(node, p) and getattr(node, p) is not None
    ]
    shapes = [s for s in shapes if int(np.prod(s)) > 1]
    return max(shapes, key=lambda s: int(np.prod(s))) if shapes else None


def _pairs(value, n: int) -> tuple[int, ...]:
    a = np.atleast_1d(np.asarray(value, dtype=np.int64)).ravel()
    return tuple(int(v) for v in (np.repeat(a, n) if a.size == 1 else a[:n]))


def _conv_geometry(node, in_shape: tuple, dims: int):
    """(out shape, padding per dim) of a Conv1d/Conv2d on ``in_shape`` = (C, *spatial)."""
    w = np.asarray(node.weight)
    k = w.shape[2:]
    stride, dilation = _pairs(node.stride, dims), _pairs(node.dilation, dims)
    spatial = in_shape[1:]
    if isinstance(node.padding, str):
        if node.padding == "valid":
            pad = (0,) * dims
        else:  # "same": the output keeps the input's size (left gets the smaller half)
            pad = tuple(dilation[i] * (k[i] - 1) // 2 for i in range(dims))
            pad_hi = tuple(dilation[i] * (k[i] - 1) - pad[i] for i in range(dims))
            out = tuple((spatial[i] + pad[i] + pad_hi[i] - dilation[i] * (k[i] - 1) - 1)
                        // stride[i] + 1 for i in range(dims))  # fmt: skip
            return (w.shape[0], *out), pad
    else:
        pad = _pairs(node.padding, dims)
    out = tuple(
        (spatial[i] + 2 * pad[i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1
        for i in range(dims)
    )
    return (w.shape[0], *out), pad


def _out_shape(path: Path, n: _Node, in_shape: tuple | None) -> tuple | None:
    """The output shape of node ``n`` given what reaches it; errors name the node."""
    node, kind = n.node, n.kind

    def bad(msg):
        raise InputFileError(f"{path}: node {n.name!r} ({kind}) {msg}")

    if kind == "Input":
        t = (getattr(node, "input_type", None) or {}).get("input")
        if t is None:
            t = getattr(node, "shape", None)
        if t is None or np.size(t) == 0:
            bad("does not say its shape")
        try:
            return tuple(int(v) for v in np.atleast_1d(t).ravel())
        except (TypeError, ValueError, OverflowError):
            bad(f"has a shape of {np.size(t)} values that are not whole numbers")
    if kind in NEURONS:
        own = _param_shape(node)
        if in_shape is not None and own is not None and int(np.prod(own)) != int(np.prod(in_shape)):
            bad(f"receives {int(np.prod(in_shape))} values but its parameters have shape {own}")
        return own if own is not None else in_shape
    if in_shape is None:
        return None
    size = int(np.prod(in_shape))
    if kind in ("Affine", "Linear"):
        w = np.asarray(node.weight)
        if w.ndim != 2:
            bad(f"has a weight of shape {w.shape}; a 2-d (out, in) matrix is needed")
        if in_shape[-1] != w.shape[1]:
            bad(f"receives shape {in_shape} but its weight takes {w.shape[1]} inputs")
        return (*in_shape[:-1], w.shape[0])
    if kind == "Scale":
        s = np.asarray(node.scale)
        if s.size not in (1, size) and s.shape != in_shape[-s.ndim :]:
            bad(f"has {s.size} scales for {size} values")
        return in_shape
    if kind in ("Delay", "Pass"):
        return in_shape
    if kind == "Flatten":
        nd = len(in_shape)
        start, end = int(node.start_dim), int(node.end_dim)
        start, end = start % nd if nd else 0, end % nd if nd else 0
        if start > end:
            bad(f"flattens dims {node.start_dim}..{node.end_dim} of a shape {in_shape}")
        return (*in_shape[:start], int(np.prod(in_shape[start : end + 1])), *in_shape[end + 1 :])
    if kind in ("Conv1d", "Conv2d"):
        dims = 1 if kind == "Conv1d" else 2
        w = np.asarray(node.weight)
        groups = int(getattr(node, "groups", 1) or 1)
        if w.ndim != dims + 2:
            bad(f"has a weight of shape {w.shape}; (C_out, C_in/groups, {dims} kernel dims) needed")
        if len(in_shape) != dims + 1 or in_shape[0] != w.shape[1] * groups:
            bad(
                f"receives shape {in_shape} but its weight takes {w.shape[1] * groups} channels "
                f"of {dims}-d input"
            )
        if w.shape[0] % groups:
            bad(f"has {w.shape[0]} output channels, not a multiple of its {groups} groups")
        out, _ = _conv_geometry(node, in_shape, dims)
        if min(out[1:]) < 1:
            bad(f"leaves no output from an input of shape {in_shape}")
        return out
    if kind in ("SumPool2d", "AvgPool2d"):
        if len(in_shape) != 3:
            bad(f"receives shape {in_shape}; a (C, H, W) input is needed")
        k, s, p = _pool_geometry(node)
        out = tuple((in_shape[1 + i] + 2 * p[i] - k[i]) // s[i] + 1 for i in range(2))
        if min(out) < 1:
            bad(f"leaves no output from an input of shape {in_shape}")
        return (in_shape[0], *out)
    bad(f"is a node MeshScope cannot map (it maps {', '.join(NEURONS + MAPS)}, Input, Output)")


def _checked(path: Path, n: _Node, shape: tuple | None, max_neurons: int) -> tuple | None:
    """``shape`` (of node ``n``'s values), after checking it holds at most ``max_neurons``."""
    if shape is None:
        return None
    if any(d < 0 for d in shape):
        raise InputFileError(f"{path}: node {n.name!r} ({n.kind}) has a negative size {shape}")
    size = math.prod(shape)
    if size > max_neurons:
        raise InputFileError(
            f"{path}: node {n.name!r} ({n.kind}) carries {size:,} values (shape {shape}); at "
            f"most {max_neurons:,} neurons are read here"
        )
    return shape


def _infer_shapes(
    path: Path, nodes: dict[str, _Node], preds: dict[str, list[str]], max_neurons: int
) -> None:
    """Every node's output shape, from the Inputs forward (a fixpoint: recurrent loops close
    through neuron nodes, whose parameters give their shape). A shape is set once — a later
    path may only bring the same number of values — so it settles within a pass per node.
    No shape may carry more than ``max_neurons`` values."""
    for n in nodes.values():
        if n.kind == "Input" or (n.kind in NEURONS and _param_shape(n.node) is not None):
            n.shape = _checked(path, n, _out_shape(path, n, None), max_neurons)
    for _ in range(len(nodes) + 1):
        changed = False
        for n in nodes.values():
            if n.kind in ("Input", "Output"):
                continue
            known = [nodes[p].shape for p in preds[n.name] if nodes[p].shape is not None]
            if not known:
                continue
            sizes = {int(np.prod(s)) for s in known}
            if len(sizes) > 1:
                raise InputFileError(
                    f"{path}: node {n.name!r} ({n.kind}) receives inputs of different sizes "
                    f"{sorted(sizes)} from {', '.join(repr(p) for p in preds[n.name])}"
                )
            shape = _checked(path, n, _out_shape(path, n, known[0]), max_neurons)
            if shape is None:
                continue
            if n.shape is None:
                n.shape, changed = shape, True
            elif int(np.prod(shape)) != int(np.prod(n.shape)):
                raise InputFileError(
                    f"{path}: node {n.name!r} ({n.kind}) gets shape {shape} here and {n.shape} "
                    "from its parameters or another path"
                )
        if not changed:
            break
    for n in nodes.values():
        if n.shape is None and n.kind not in ("Output",):
            raise InputFileError(
                f"{path}: the shape of node {n.name!r} ({n.kind}) cannot be inferred: no Input "
                "reaches it and its parameters do not say it"
            )


# ------------------------------------------------------------------ linear maps
def _conv_matrix(node, in_shape: tuple, out_shape: tuple, dims: int) -> sp.csr_matrix:
    """The (in units × out units) matrix of a Conv1d/Conv2d: one entry per (nonzero weight,
    output position) whose input position lies inside the input."""
    w = np.asarray(node.weight, dtype=np.float64)
    groups = int(getattr(node, "groups", 1) or 1)
    c_out, c_in_g = w.shape[:2]
    stride, dilation = _pairs(node.stride, dims), _pairs(node.dilation, dims)
    _, pad = _conv_geometry(node, in_shape, dims)
    taps = np.argwhere(w != 0)  # (co, ci_local, k...)
    vals = w[tuple(taps.T)]
    co, ci = taps[:, 0], (taps[:, 0] // (c_out // groups)) * c_in_g + taps[:, 1]
    spatial_out = out_shape[1:]
    grids = np.meshgrid(*[np.arange(s) for s in spatial_out], indexing="ij")
    pos = [g.ravel() for g in grids]  # output positions
    inside = np.ones((taps.shape[0], pos[0].size), dtype=bool)
    src = ci[:, None].astype(np.int64)
    dst = co[:, None].astype(np.int64)
    for i in range(dims):
        p = pos[i][None, :] * stride[i] - pad[i] + taps[:, 2 + i][:, None] * dilation[i]
        inside &= (p >= 0) & (p < in_shape[1 + i])
        src = src * in_shape[1 + i] + p
        dst = dst * spatial_out[i] + pos[i][None, :]
    rows, cols = src[inside], dst[inside]
    data = np.broadcast_to(vals[:, None], inside.shape)[inside]
    n_in, n_out = int(np.prod(in_shape)), int(np.prod(out_shape))
    return sp.csr_matrix((data, (rows, cols)), shape=(n_in, n_out))


def _pool_matrix(node, in_shape: tuple, out_shape: tuple, average: bool) -> sp.csr_matrix:
    k, s, p = _pool_geometry(node)
    c, oh, ow = out_shape
    ch, oy, ox, ky, kx = np.meshgrid(
        np.arange(c), np.arange(oh), np.arange(ow), np.arange(k[0]), np.arange(k[1]),
        indexing="ij",
    )  # fmt: skip
    iy, ix = oy * s[0] - p[0] + ky, ox * s[1] - p[1] + kx
    inside = (iy >= 0) & (iy < in_shape[1]) & (ix >= 0) & (ix < in_shape[2])
    rows = ((ch * in_shape[1] + iy) * in_shape[2] + ix)[inside]
    cols = ((ch * oh + oy) * ow + ox)[inside]
    value = 1.0 / (k[0] * k[1]) if average else 1.0
    shape = (int(np.prod(in_shape)), int(np.prod(out_shape)))
    return sp.csr_matrix((np.full(rows.size, value), (rows, cols)), shape=shape)


def _entries(n: _Node, in_shape: tuple) -> int:
    """The most entries the linear map of a map node can have (told before it is built)."""
    size = math.prod(in_shape)
    if n.kind in ("Affine", "Linear"):
        return math.prod(in_shape[:-1]) * int(np.count_nonzero(n.node.weight))
    if n.kind in ("Conv1d", "Conv2d"):
        return int(np.count_nonzero(n.node.weight)) * math.prod(n.shape[1:])
    if n.kind in POOLS:
        k, _, _ = _pool_geometry(n.node)
        return math.prod(n.shape) * k[0] * k[1]
    return size


def _matrix(n: _Node, in_shape: tuple) -> sp.csr_matrix:
    """The (in units × out units) linear map of a map node."""
    size = int(np.prod(in_shape))
    if n.kind in ("Delay", "Flatten", "Pass"):
        return sp.identity(size, format="csr")
    if n.kind == "Scale":
        s = np.broadcast_to(np.asarray(n.node.scale, dtype=np.float64), in_shape).ravel()
        return sp.diags(s, format="csr")
    if n.kind in ("Affine", "Linear"):
        wt = sp.csr_matrix(np.asarray(n.node.weight, dtype=np.float64).T)
        wt.eliminate_zeros()
        lead = int(np.prod(in_shape[:-1]))
        return wt if lead == 1 else sp.kron(sp.identity(lead), wt, format="csr")
    if n.kind in ("Conv1d", "Conv2d"):
        return _conv_matrix(n.node, in_shape, n.shape, 1 if n.kind == "Conv1d" else 2)
    return _pool_matrix(n.node, in_shape, n.shape, n.kind == "AvgPool2d")


def _depth(nodes: dict[str, _Node], succ: dict[str, list[str]]) -> dict[str, int]:
    """Hops from the nearest Input node, breadth first."""
    depth = {k: 0 for k, n in nodes.items() if n.kind == "Input"}
    frontier = list(depth)
    while frontier:
        nxt = []
        for k in frontier:
            for d in succ[k]:
                if d not in depth:
                    depth[d] = depth[k] + 1
                    nxt.append(d)
        frontier = nxt
    return depth


# ------------------------------------------------------------------ the network
def _paths(path: Path, nodes, succ, pops) -> dict[tuple[str, str], list[tuple[str, ...]]]:
    """Per (source population, target population): the map nodes of every path between them
    (a neuron node ends a path; an Output or an Input carries nothing on)."""
    out: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for src in pops:
        stack = [(d, (src.name,)) for d in succ[src.name]]
        while stack:
            name, seen = stack.pop()
            n = nodes[name]
            if n.kind in NEURONS:
                out.setdefault((src.name, name), []).append(seen[1:])
                continue
            if n.kind in ("Output", "Input"):
                continue
            if name in seen:
                raise InputFileError(
                    f"{path}: nodes {' -> '.join(seen[1:] + (name,))} form a loop with no neuron "
                    "node in it"
                )
            stack.extend((d, seen + (name,)) for d in succ[name])
    return out


def _structured(nodes, src: str, dst: str, routes, pop_id) -> ConvProjection | None:
    """The ``ConvProjection`` of the one path ``src`` -> ``dst`` if it is a convolution or a
    pool followed by pools without padding (delays and a final flatten aside), else None."""
    if len(routes) != 1:
        return None  # parallel paths add: kept explicit
    route = [nodes[k] for k in routes[0] if nodes[k].kind not in ("Delay", "Pass")]
    while route and route[-1].kind == "Flatten":
        route.pop()
    if not route or any(n.kind not in ("Conv1d", "Conv2d", *POOLS) for n in route):
        return None
    if any(n.kind not in POOLS for n in route[1:]):
        return None
    first, in_shape = route[0], nodes[src].shape
    s, t = pop_id[src], pop_id[dst]
    if first.kind in POOLS:
        k, st, pad = _pool_geometry(first.node)
        conv = ConvProjection.pool(s, t, in_shape, first.shape, k, st, pad, _pool_value(first, k))
    else:
        dims = 1 if first.kind == "Conv1d" else 2
        w = np.asarray(first.node.weight, dtype=np.float64)
        stride, dilation = _pairs(first.node.stride, dims), _pairs(first.node.dilation, dims)
        _, pad = _conv_geometry(first.node, in_shape, dims)
        lift = (lambda v, one: (one, *v)) if dims == 1 else (lambda v, one: v)
        conv = ConvProjection(
            s, t,
            in_shape if dims == 2 else (in_shape[0], 1, in_shape[1]),
            first.shape if dims == 2 else (first.shape[0], 1, first.shape[1]),
            w if dims == 2 else w[:, :, None, :],
            lift(stride, 1), lift(pad, 0), lift(dilation, 1),
            groups=int(getattr(first.node, "groups", 1) or 1),
        )  # fmt: skip
    for n in route[1:]:
        k, st, pad = _pool_geometry(n.node)
        if any(pad) or len(conv.out_shape) != 3:
            return None  # a padded pool reads outside the conv's output: kept explicit
        conv = conv.then_pool(k, st, n.shape, _pool_value(n, k))
    return conv


def _pool_geometry(node) -> tuple[tuple[int, ...], ...]:
    """(kernel, stride, padding) of a SumPool2d/AvgPool2d, each as two ints."""
    return tuple(_pairs(getattr(node, a), 2) for a in ("kernel_size", "stride", "padding"))


def _pool_value(n: _Node, kernel) -> float:
    return 1.0 / (kernel[0] * kernel[1]) if n.kind == "AvgPool2d" else 1.0


def read_nir(
    path,
    *,
    rates: dict | None = None,
    max_synapses: int = MAX_SYNAPSES,
    weight_bits: int = 8,
    expand: bool | None = None,
    limits: ReadLimits | None = None,
) -> Network:
    """The Network a ``.nir`` file describes (see the module's note).

    ``expand``: None keeps a convolution (with the pools after it) structured when it has
    more than ``EXPAND_ABOVE`` synapses, True expands every one, False keeps every one.
    ``limits`` (the command line's generous ones by default) bound the file's bytes (and
    its arrays' declared sizes), the neurons of the network and, with ``max_synapses``, its
    explicit synapses — checked before anything of that size is built.
    """
    path = Path(path)
    lim = limits or ReadLimits()
    max_synapses = min(max_synapses, lim.synapses)
    graph = _read_graph(path, lim.bytes)
    nodes, edges = _flatten_graph(graph)
    succ: dict[str, list[str]] = {k: [] for k in nodes}
    preds: dict[str, list[str]] = {k: [] for k in nodes}
    for s, d in edges:
        for end in (s, d):
            if end not in nodes:
                raise InputFileError(
                    f"{path}: edge ({s!r}, {d!r}) names node {end!r}, which the graph does not "
                    f"have (nodes: {', '.join(sorted(nodes))})"
                )
        succ[s].append(d)
        preds[d].append(s)
    unknown = [
        n for n in nodes.values() if n.kind not in (*NEURONS, *MAPS, "Input", "Output", "Pass")
    ]
    if unknown:
        n = unknown[0]
        raise InputFileError(
            f"{path}: node {n.name!r} is a {n.kind}, which MeshScope cannot map (it maps "
            f"{', '.join(NEURONS + MAPS)}, Input, Output and nested graphs)"
        )
    _infer_shapes(path, nodes, preds, lim.neurons)
    depth = _depth(nodes, succ)  # populations in the order spikes reach them
    pops = sorted(
        (n for n in nodes.values() if n.kind in NEURONS or n.kind == "Input"),
        key=lambda n: depth.get(n.name, len(nodes)),
    )
    if not any(n.kind in NEURONS for n in pops):
        raise InputFileError(f"{path}: the graph has no neuron node, so nothing to map")
    if sum(math.prod(n.shape) for n in pops) > lim.neurons:
        raise CapacityError(
            f"{path}: its populations hold {sum(math.prod(n.shape) for n in pops):,} neurons; "
            f"at most {lim.neurons:,} are read here"
        )
    sizes = np.array([int(np.prod(n.shape)) for n in pops], dtype=np.int64)
    offset = dict(
        zip(
            [n.name for n in pops],
            np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist(),
            strict=True,
        )
    )
    n_total = int(sizes.sum())
    pop_id = {n.name: k for k, n in enumerate(pops)}
    blocks = []  # (src offset, dst offset, matrix)
    projections = []
    total = 0
    for (src, dst), routes in _paths(path, nodes, succ, pops).items():
        conv = _structured(nodes, src, dst, routes, pop_id) if expand is not True else None
        if conv is not None and (expand is False or conv.n_synapses > EXPAND_ABOVE):
            projections.append(conv)
            continue
        for route in routes:
            m = sp.identity(int(np.prod(nodes[src].shape)), format="csr")
            shape = nodes[src].shape
            for name in route:
                entries = _entries(nodes[name], shape)
                if entries > max_synapses:
                    raise InputFileError(
                        f"{path}: node {name!r} ({nodes[name].kind}) of the projection {src!r} "
                        f"-> {dst!r} makes as many as {entries:,} explicit synapses, more than "
                        f"{max_synapses:,}"
                    )
                step = _matrix(nodes[name], shape)
                work = int(m.getnnz(axis=0).astype(np.int64) @ step.getnnz(axis=1))
                if work > PRODUCT_WORK * max_synapses:
                    raise InputFileError(
                        f"{path}: the path {src!r} -> {dst!r} multiplies out to as many as "
                        f"{work:,} connections at node {name!r}; at most {max_synapses:,} "
                        "synapses are read here"
                    )
                m = m @ step
                shape = nodes[name].shape
            m = m.tocsr()
            m.eliminate_zeros()
            blocks.append((offset[src], offset[dst], m))
            total += m.nnz
            if total > max_synapses:
                raise InputFileError(
                    f"{path}: the projection {src!r} -> {dst!r} brings the graph to "
                    f"{total:,} explicit synapses, more than {max_synapses:,}; only "
                    "convolutions (with the pools after them) stay structured"
                )
    rows, cols, vals = [], [], []
    for so, do, m in blocks:
        coo = m.tocoo()
        rows.append(coo.row.astype(np.int64) + so)
        cols.append(coo.col.astype(np.int64) + do)
        vals.append(coo.data)
    a = sp.csr_matrix(
        (
            np.concatenate(vals) if vals else np.zeros(0),
            (
                np.concatenate(rows) if rows else np.zeros(0, np.int64),
                np.concatenate(cols) if cols else np.zeros(0, np.int64),
            ),
        ),
        shape=(n_total, n_total),
    )
    a.sum_duplicates()  # parallel paths add
    a.eliminate_zeros()
    a.sort_indices()
    names = [n.name for n in pops]
    info = {n.name: {"type": n.kind, "shape": list(n.shape)} for n in pops}
    network = Network(
        name=path.name,
        shapes=tuple(n.shape for n in pops),
        projections=tuple(projections),
        indptr=a.indptr,
        indices=a.indices,
        population=np.repeat(np.arange(len(pops)), sizes),
        population_names=names,
        rate=np.full(n_total, DEFAULT_RATE),
        weights=a.data.astype(np.float32),
        weight_bits=(weight_bits,) * len(pops),
        spike_source=tuple(n.kind == "Input" for n in pops),
        description=f"NIR graph {path.name}: "
        + ", ".join(f"{n.name} ({n.kind} {'x'.join(map(str, n.shape))})" for n in pops),
        params={"nir": info},
    )
    if rates:
        try:
            network = with_rates(network, rates, where=str(path))
        except SpecError as e:
            raise InputFileError(str(e)) from None
    return network
