"""Scenes: one-click setups of the Traffic tab that teach one thing about congestion.

A scene is a small JSON object — what to simulate and two or three sentences on what to
look for — so a teacher can hand one out: as a file, or in a link (``?scene=NAME`` for a
built-in scene, ``?scene=`` and the scene's JSON in URL-safe base64 for any other).

Two kinds:

* ``"synthetic"``: a pattern on a mesh of the reference router ``side`` routers wide and
  ``rows`` deep (0, the default: as deep as wide), with ``pattern``, ``rate``,
  ``packet_flits``, ``cycles``, ``routing`` (a name of ``engine.hardware.routing``'s registry: xy,
  yx, o1turn), optionally a latency–load ``sweep``;
* ``"mapping"``: a network on hardware placed by a placer (``network``, ``hardware``,
  ``placer``, ``partition``), whose time step is simulated (``mode``, ``multicast``); with
  ``compare`` (placers) the page also lists each placer's analytic and simulated step.

Everything here is plain data and checking (no UI toolkit): ``parse_scene`` turns a dict
from anyone — a file, a URL — into a ``Scene`` or raises ``SpecError`` saying which field is
wrong; the page then asks the session's ``ClientAccess`` about the names it holds, as for
anything else a client names.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
from dataclasses import dataclass, field

from engine.errors import SpecError
from engine.hardware.routing import routings
from engine.simulate import patterns
from engine.simulate.step import MODES

__all__ = [
    "FORMAT",
    "SCENES",
    "Scene",
    "decode_scene",
    "encode_scene",
    "parse_scene",
    "scene_from_arg",
]

FORMAT = "meshscope-scene"
VERSION = 1
KINDS = ("synthetic", "mapping")
ROUTINGS = tuple(routings.names())
PATTERNS = tuple(n for n in patterns.names() if n != "matrix")  # a scene carries no matrix file
MAX_ARG_CHARS = 8_192  # a scene in a URL is small; anything longer is refused unread


@dataclass(frozen=True)
class Scene:
    """One Traffic-tab setup and what it shows (see the module's docstring)."""

    title: str
    text: str
    kind: str = "synthetic"
    # synthetic
    pattern: str = "uniform"
    side: int = 8
    rows: int = 0  # 0: as many as ``side`` (a square mesh)
    rate: float = 0.1
    packet_flits: int = 1
    cycles: int = 2000
    routing: str = "xy"
    sweep: bool = False
    # mapping
    network: str = ""
    hardware: str = ""
    placer: str = "packed-row"
    partition: str | None = None
    mode: str = "pipelined"
    multicast: bool = False
    compare: tuple[str, ...] = ()
    seed: int = 0
    name: str = field(default="", compare=False)  # a built-in scene's name

    def to_dict(self) -> dict:
        """The scene as its JSON object (fields at their defaults left out)."""
        out = {"format": FORMAT, "version": VERSION}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "name" or value == f.default:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        out.setdefault("title", self.title)
        out.setdefault("text", self.text)
        return out


_TYPES = {
    "title": str, "text": str, "kind": str, "pattern": str, "side": int, "rows": int,
    "rate": float,
    "packet_flits": int, "cycles": int, "routing": str, "sweep": bool, "network": str,
    "hardware": str, "placer": str, "partition": (str, type(None)), "mode": str,
    "multicast": bool, "compare": list, "seed": int,
}  # fmt: skip
_BOUNDS = {
    "side": (2, 32), "rows": (0, 32), "rate": (0.0, 1.0), "packet_flits": (1, 32),
    "cycles": (10, 200_000), "seed": (0, 2**31 - 1),
}  # fmt: skip


def parse_scene(data) -> Scene:
    """A ``Scene`` from a scene's JSON object; ``SpecError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise SpecError("a scene is a JSON object")
    if data.get("format", FORMAT) != FORMAT:
        raise SpecError(f"not a scene: its format is {data.get('format')!r}, not {FORMAT!r}")
    if data.get("version", VERSION) != VERSION:
        raise SpecError(f"scene version {data.get('version')!r}; this MeshScope reads {VERSION}")
    fields = {k: v for k, v in data.items() if k not in ("format", "version")}
    unknown = sorted(set(fields) - set(_TYPES))
    if unknown:
        raise SpecError(f"a scene has no field {', '.join(map(repr, unknown))}")
    for key in ("title", "text"):
        if not isinstance(fields.get(key), str) or not fields[key].strip():
            raise SpecError(f"a scene needs a {key}")
    for key, value in fields.items():
        want = _TYPES[key]
        ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
        if want is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise SpecError(f"scene field {key!r} has the wrong type ({type(value).__name__})")
        if key in _BOUNDS:
            lo, hi = _BOUNDS[key]
            if not lo <= value <= hi:
                raise SpecError(f"scene field {key!r} is {value}; it must lie in {lo} … {hi}")
    if "compare" in fields:
        if not all(isinstance(p, str) for p in fields["compare"]) or len(fields["compare"]) > 8:
            raise SpecError("scene field 'compare' lists at most 8 placer names")
        fields["compare"] = tuple(fields["compare"])
    if "rate" in fields:
        fields["rate"] = float(fields["rate"])
    scene = Scene(**fields)
    if scene.rows == 1:
        raise SpecError("scene field 'rows' is 0 (as many as 'side') or 2 … 32, not 1")
    if scene.kind not in KINDS:
        raise SpecError(f"a scene's kind is {' or '.join(KINDS)}, not {scene.kind!r}")
    if scene.routing not in ROUTINGS:
        raise SpecError(f"routing is one of {', '.join(ROUTINGS)}, not {scene.routing!r}")
    if scene.mode not in MODES:
        raise SpecError(f"mode is {' or '.join(MODES)}, not {scene.mode!r}")
    if scene.kind == "synthetic" and scene.pattern not in PATTERNS:
        raise SpecError(f"a scene's pattern is one of {', '.join(PATTERNS)}, not {scene.pattern!r}")
    if scene.kind == "mapping" and not (scene.network and scene.hardware):
        raise SpecError("a mapping scene names its network and its hardware")
    return scene


def encode_scene(scene: Scene) -> str:
    """The scene as a ``?scene=`` value: its JSON in URL-safe base64, no padding."""
    raw = json.dumps(scene.to_dict(), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_scene(value: str) -> Scene:
    """The scene of a ``?scene=`` value that is not a built-in name."""
    if len(value) > MAX_ARG_CHARS:
        raise SpecError(f"a scene link holds at most {MAX_ARG_CHARS:,} characters")
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        data = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError) as e:
        raise SpecError(f"the scene in the link is not readable ({type(e).__name__})") from None
    return parse_scene(data)


def scene_from_arg(value: str) -> Scene:
    """A built-in scene by name, or the scene a link carries."""
    if value in SCENES:
        return SCENES[value]
    try:
        return decode_scene(value)
    except SpecError:
        if len(value) <= 40 and value.replace("-", "").isalnum():  # a name, mistyped
            raise SpecError(
                f"no scene {value!r}: the built-in ones are {', '.join(SCENES)}"
            ) from None
        raise


# ------------------------------------------------------------------ the built-in scenes
LINEAR = "linear-tiled-identity:M=36,N=32"  # 36 origin cores, each to its own destination
LINEAR_MESH = "mesh:36x36x2"  # room for the diagonal's 36 × 36 block

_BUILT_IN = [
    Scene(
        name="uniform-below",
        title="Uniform traffic below saturation",
        text="Every router sends to a random other one at 0.15 flits per cycle, well under "
        "the 0.28 where this mesh saturates. Buffers fill a little and drain again: "
        "latency stays near the zero-load 33 cycles, and the histogram stays narrow.",
        pattern="uniform", rate=0.15, cycles=3000,
    ),
    Scene(
        name="uniform-beyond",
        title="Uniform traffic beyond saturation",
        text="The same traffic at 0.35 flits per cycle, past saturation. The centre links "
        "carry the most routes (X first, then Y) and saturate first; their buffers fill, "
        "routers upstream are outlined as back-pressure spreads, and latency grows "
        "without end — watch the histogram's tail.",
        pattern="uniform", rate=0.35, cycles=3000, sweep=True,
    ),
    Scene(
        name="hotspot",
        title="A hotspot",
        text="Every router sends to the one near the centre. That router can take one flit "
        "per cycle, so the mesh saturates at 1/64 of a flit per node per cycle; at 0.03 a tree of "
        "full buffers grows back from it along the routes, and packets far from it wait "
        "on links they do not even need for long.",
        pattern="hotspot", rate=0.03, cycles=3000,
    ),
    Scene(
        name="transpose-xy",
        title="Transpose, X then Y",
        text="Router (x, y) sends to (y, x). With X-first routing every packet turns at the "
        "diagonal's far side, so the load gathers on links above the diagonal; the "
        "routes' bound is 1/7 (0.14) flit per node per cycle. That bound counts only the "
        "hot links' capacity, as if each carried a flit every cycle; the mesh saturates well "
        "below it, near 0.09 (the sweep below), because packets queued to turn hold buffers and "
        "virtual channels the packets behind them need, so the hot links idle some cycles. "
        "At 0.12 the run is past saturation. Compare with the Y-first and O1TURN scenes.",
        pattern="transpose", rate=0.12, cycles=10000, sweep=True,
    ),
    Scene(
        name="transpose-yx",
        title="Transpose, Y then X",
        text="The same traffic with Y-first routing: the mirror image — the hot links are "
        "now below the diagonal. The pattern is symmetric, so neither order wins: the sweep "
        "finds saturation near 0.09 again (a run's packets differ by chance, so the curves "
        "differ a little). A pattern that is not symmetric would favour one order.",
        pattern="transpose", rate=0.12, cycles=10000, routing="yx", sweep=True,
    ),
    Scene(
        name="transpose-o1turn",
        title="Transpose, O1TURN",
        text="The same traffic again, each packet going X then Y or Y then X as a coin "
        "falls, each order on its own half of the virtual channels. Half the load above "
        "the diagonal moves to its mirror image below it: the hot links carry half as "
        "much, and the routes' bound doubles to 2/7 flit per node per cycle. Yet the sweep finds "
        "saturation near 0.09 again, no better than one order: this router has two "
        "virtual channels per port, so each order gets one, and a packet stuck behind "
        "another of its order has no second lane to pass in. The bound counts links; "
        "here buffers and virtual channels decide first (BookSim2 finds the same).",
        pattern="transpose", rate=0.12, cycles=10000, routing="o1turn", sweep=True,
    ),
    Scene(
        name="square",
        title="A linear layer placed as a square (Loihi 2 runtime model §VI)",
        text="36 origin cores each send 32 messages per step to their own destination, "
        "placed as a near-square block. The routes of a row's pairs all cross the "
        "block's centre, so its centre links carry M^1.5/4 = 54 of them: they saturate "
        "first. Click the hottest link on the Mesh tab to see the pairs sharing it.",
        kind="mapping", network=LINEAR, hardware=LINEAR_MESH, placer="pairs-square",
        partition="natural",
    ),
    Scene(
        name="x-shape",
        title="The same layer placed as an X",
        text="The pairs sit on both diagonals of a block, so their routes spread over more "
        "rows and columns. The heaviest link carries M − 2 = 34 pairs' messages instead "
        "of 54, and the step shortens although every pair travels farther.",
        kind="mapping", network=LINEAR, hardware=LINEAR_MESH, placer="pairs-x",
        partition="natural",
    ),
    Scene(
        name="diagonal",
        title="The same layer placed on a diagonal",
        text="Each pair sits on the diagonal of a 36 × 36 block, so routes barely overlap "
        "and the heaviest link grows only linearly with the layer (M − 1 = 35 pairs). "
        "The price is area: the layer spreads over a mesh 36 routers wide.",
        kind="mapping", network=LINEAR, hardware=LINEAR_MESH, placer="pairs-diagonal",
        partition="natural",
    ),
    Scene(
        name="heuristics",
        title="The four fill orders (Loihi 2 mapping ES §4.3.1)",
        text="sparse-mlp-1 on one Loihi 2 chip under the four heuristic fill orders. On the "
        "chip they ranked packed-row 30.14 < spread-row 32.58 < packed-col 34.86 < "
        "spread-col 40.76 µs; the table compares the analytic model and the simulated "
        "step with that order. Packed orders crowd a layer's traffic into few routers; "
        "spread ones share it out, at the price of longer routes.",
        kind="mapping", network="sparse-mlp-1", hardware="loihi2", placer="packed-row",
        partition="min+2", compare=("packed-row", "spread-row", "packed-col", "spread-col"),
    ),
]  # fmt: skip
SCENES: dict[str, Scene] = {s.name: s for s in _BUILT_IN}
