"""The sidebar: what to map, files, undo/redo, reset, and cores per layer.

``ControlsView`` turns widgets into ``ExplorerState`` actions and nothing more: every
choice comes from the engine's registries (workloads, demo files, hardware presets,
partitioners, placers), every action is a state method, and an action that raises
``MeshScopeError`` becomes an error notification (``run_action``) while the state stays
as it was.
"""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from html import escape

import panel as pn
import param
from panel.reactive import ReactiveHTML

from engine.hardware import preset_names
from engine.mapping.assignment import SPLITS
from engine.mapping.partition import partitioners
from engine.mapping.placement import placement_choices
from engine.progress import reporting
from engine.specs import demo_files
from engine.workloads import workloads
from explorer.admission import place_text
from explorer.state import ExplorerState
from explorer.views._page import (
    LiveHTML,
    notify_error,
    notify_info,
    off_page,
    run_action,
    session_scheduler,
)
from explorer.views.mesh_columns import population_colors
from explorer.views.upload import UploadInput

__all__ = [
    "ControlsView",
    "LayerTable",
    "download_name",
    "hardware_choices",
    "network_choices",
    "partition_choices",
    "placer_choices",
    "predictor_choices",
]

DEFAULT_PARTITION = "default"


# ------------------------------------------------------------------ choices (registries)
# what a menu shows when the loaded network or hardware is none of its entries (an upload,
# a mesh: spec, a scene's): the spec field below says what it is, the menu nothing false
OTHER = "(another: the spec below)"


def network_choices() -> dict[str, dict[str, str]]:
    """Networks by group (label → spec): the generated workloads and the shipped demo files,
    after the entry for anything else."""
    return {
        "loaded": {OTHER: ""},
        "generated workloads": {n: n for n in sorted(workloads.names())},
        "demo files": {p.name: p.name for p in demo_files()},
    }


def hardware_choices() -> dict[str, str]:
    """Hardware presets (label → spec), after the entry for anything else."""
    return {OTHER: "", **{n: n for n in preset_names()}}


def partition_choices() -> dict[str, str]:
    """Label → partition spec ("" = the network's default): min, min+1, min+2, the minimum
    partition with each split of a (C, H, W) layer (``min@rows``: SENMap's channel-, height-
    and width-wise partitioning, and tiles), natural and every registered partitioner that
    needs no parameters."""
    choices = {DEFAULT_PARTITION: "", "min": "min", "min+1": "min+1", "min+2": "min+2"}
    for split in SPLITS:
        choices[f"min · {split}"] = f"min@{split}"
    for name in partitioners:
        if partitioners.grammar(name) == name and name not in choices:  # needs no parameters
            choices[name] = name
    return choices


def predictor_choices() -> dict[str, str]:
    """The predictors of ``engine.predict.predictors``, by the words their cards show."""
    from engine.predict import predictors

    return {predictors[n].label: n for n in predictors}


def placer_choices() -> list[str]:
    return placement_choices()


def _file_word(text: str, empty: str) -> str:
    """``text`` as a piece of a file name (specs carry ':', '=' and ',')."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", text).strip("_.") or empty


def download_name(
    network_name: str,
    hardware_name: str = "",
    latency_us: float | None = None,
    when: datetime | None = None,
) -> str:
    """What a saved mapping's file is called: what it maps, onto what, how fast, and when
    (UTC, to the minute), e.g. ``sparse-mlp-1_loihi2_34.95us_2026-12-07-2117-mapping.json``:
    two saves of one network differ by their latency or their time, never by chance."""
    words = [_file_word(network_name, "network")]
    if hardware_name:
        words.append(_file_word(hardware_name, "hardware"))
    if latency_us is not None:
        words.append(f"{latency_us:.2f}us")
    if when is not None:
        words.append(when.astimezone(UTC).strftime("%Y-%m-%d-%H%M"))
    return "_".join(words) + "-mapping.json"


def _spec_choice(spec: str, options) -> str:
    """The menu entry a spec came from: itself, or its workload name before ':' — else the
    entry for another (""), never an entry that is not what is loaded."""
    if spec in options:
        return spec
    base = spec.split(":", 1)[0]
    return base if base in options else ""


# ------------------------------------------------------------------ view
_CSS = """
.ms-section { font: 600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
              color: #6b7280; text-transform: uppercase; letter-spacing: .06em;
              border-bottom: 1px solid #e5e7eb; padding-bottom: 3px; width: 100%; }
.ms-aside { font: 13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #7c2d12;
            background: #fff7ed; border: 1px solid #fed7aa; border-radius: 6px; padding: 6px 8px;
            line-height: 1.35; }
.ms-note { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
           color: #6b7280; line-height: 1.35; }
.ms-layer { font: 13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2933;
            display: flex; align-items: center; gap: 6px; white-space: nowrap; }
.ms-layer .swatch { width: 12px; height: 12px; border-radius: 2px; flex: none; }
.ms-layer .name { min-width: 0; flex: 0 1 auto; overflow: hidden; text-overflow: ellipsis; }
.ms-layer .size { color: #9ca3af; font-size: 11px; min-width: 0; overflow: hidden;
                  text-overflow: ellipsis; }
.ms-count { font: 600 14px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
            color: #1f2933; text-align: right; }
"""
# the rows of LayerTable: label, count, − and + as the widgets' row of each layer looked
_LAYER_CSS = """
.ms-layer-row { display: flex; align-items: flex-start; height: 30px; }
.ms-layer-row .ms-layer { width: 160px; margin: 6px 0 0 10px; overflow: hidden; }
.ms-layer-row .ms-count { width: 32px; margin: 5px 5px 0 5px; text-align: left; }
.ms-step { width: 30px; height: 26px; margin: 2px; padding: 2px 0; box-sizing: border-box;
           font: 14px/1 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
           color: #1a1d21; background: #f3f3f3; border: 1px solid transparent;
           border-radius: 4px; cursor: pointer; }
.ms-step:active { transform: scale(0.98); }
.ms-step:disabled { opacity: .65; cursor: not-allowed; pointer-events: none; }
"""
_SMALL_LABEL = [":host label { font-size: 11px; color: #6b7280; }"]


def _spec_inputs(menu: pn.widgets.Select, label: str, spec: str, example: str):
    """A menu of the known specs and, under it, the spec as text to edit (the text wins)."""
    text = pn.widgets.TextInput(
        label=label, value=spec, placeholder=example, width=WIDTH, margin=(0, 10, 5, 10),
        stylesheets=_SMALL_LABEL,
    )  # fmt: skip
    return menu, text


WIDTH = 280
LOAD = "Load"  # the Load button's label (while loading: the partitioner's progress)


def _section(title: str) -> pn.pane.HTML:
    return pn.pane.HTML(
        f'<div class="ms-section">{escape(title)}</div>',
        stylesheets=[_CSS],
        margin=(14, 10, 2, 10),
        sizing_mode="stretch_width",
    )


def _note(text: str, **params) -> pn.pane.HTML:
    return pn.pane.HTML(
        f'<div class="ms-note">{text}</div>', stylesheets=[_CSS], margin=(0, 10), **params
    )


# LayerTable's rows, drawn in the browser from its ``rows`` (text set as text, not markup)
_DRAW_LAYER_ROWS = """
const element = (tag, cls, text) => {
  const el = document.createElement(tag);
  el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
};
layers.replaceChildren(...data.rows.map((row, k) => {
  const label = element("div", "ms-layer");
  label.title = row.hint;
  const swatch = element("span", "swatch");
  swatch.style.background = row.color;
  label.append(swatch, element("span", "name", row.name), element("span", "size", row.size));
  const count = element("div", "ms-count", String(row.count));
  count.dataset.testid = `cores-${k}`;
  const step = (text, delta, enabled, what) => {
    const button = element("button", "ms-step", text);
    button.value = `${k}:${delta}`;
    button.title = `one core ${what} for ${row.name}`;
    button.disabled = !enabled;
    return button;
  };
  const line = element("div", "ms-layer-row");
  line.append(label, count, step("−", -1, row.fewer, "fewer"), step("+", 1, row.more, "more"));
  return line;
}));
"""


class LayerTable(ReactiveHTML):
    """The rows of "Cores per layer" in one Bokeh model, drawn in the browser: each layer's
    colour, name and size, its core count, and its − and + buttons (their titles say what
    they do).

    A row of Panel widgets per layer (label, count, two buttons and their tooltips) was
    about nine Bokeh models, built and sent with every page: 0.3 s of an 8-chip board's
    page. ``on_press(population, delta)`` is called when − (-1) or + (+1) is clicked; a
    disabled button cannot be.
    """

    rows = param.List(
        default=[], item_type=dict,
        doc="per layer: name, size and hint (the label and its title), color, count, and "
        "fewer and more (whether − and + are enabled)",
    )  # fmt: skip

    _template = '<div id="layers" onclick="${_click}"></div>'
    _scripts = {"render": _DRAW_LAYER_ROWS, "rows": _DRAW_LAYER_ROWS}  # drawn, then redrawn

    def __init__(self, on_press=None, **params):
        super().__init__(stylesheets=[_CSS, _LAYER_CSS], **params)
        self.on_press = on_press

    def _click(self, event) -> None:
        # a click anywhere in the rows; a button's ``value`` says which layer and which way
        value = str((event.data.get("target") or {}).get("value") or "")
        press = re.fullmatch(r"(\d+):(-1|1)", value)
        if press is not None and self.on_press is not None:
            self.on_press(int(press[1]), int(press[2]))


class ControlsView(pn.viewable.Viewer):
    """Sidebar widgets bound to one session's ``ExplorerState``."""

    state = param.ClassSelector(class_=ExplorerState)
    notify = param.Callable(default=None, doc="error reporter (default: a notification)")
    inform = param.Callable(
        default=None,
        doc="what changed beside the user's request (default: an information notification)",
    )
    aside = param.String(
        default="", doc="why the tab shown does not use the sidebar ('' when it does)"
    )

    def __init__(self, **params):
        super().__init__(**params)
        s = self.state
        nets = network_choices()
        net_options = [v for group in nets.values() for v in group.values()]
        spec = s.inputs.network_spec
        self.network_select, self.network_text = _spec_inputs(
            pn.widgets.Select(label="Network", groups=nets,
                              value=_spec_choice(spec, net_options), width=WIDTH),
            "… as a spec, editable (e.g. qubo:n=2000)", spec, "e.g. qubo:n=2000",
        )  # fmt: skip
        hw, spec = hardware_choices(), s.inputs.hardware_spec
        self.hardware_select, self.hardware_text = _spec_inputs(
            pn.widgets.Select(label="Hardware", options=hw,
                              value=_spec_choice(spec, hw.values()), width=WIDTH),
            "… or any mesh: mesh:WxH[xK][@CXxCY]", spec, "e.g. mesh:8x8x2",
        )  # fmt: skip
        parts = partition_choices()
        self.partition_select = pn.widgets.Select(
            label="Partition", options=parts,
            value=s.inputs.partition_spec if s.inputs.partition_spec in parts.values() else "",
            width=WIDTH // 2 - 5,
        )  # fmt: skip
        self.placer_select = pn.widgets.Select(
            label="Placer", options=placer_choices(), value=s.inputs.placer, width=WIDTH // 2 - 5
        )
        self.load_button = pn.widgets.Button(
            label=LOAD, color="primary", width=WIDTH, description="Partition and place again"
        )
        self.upload = UploadInput(
            access=s.access, accept=".json,.npz,.hgr,.nir", width=WIDTH, notify=self.notify
        )
        self.download = pn.widgets.FileDownload(
            callback=self._mapping_file, filename=download_name(s.network.name, s.hardware.name),
            label="Save mapping (JSON)", embed=False, width=WIDTH, variant="outline",
        )  # fmt: skip
        self.undo_button = pn.widgets.Button(label="↶ Undo", width=WIDTH // 2 - 5)
        self.redo_button = pn.widgets.Button(label="Redo ↷", width=WIDTH // 2 - 5)
        self.reset_select = pn.widgets.Select(
            options=placer_choices(), value=s.inputs.placer, width=150
        )
        self.predictor_select = pn.widgets.Select(
            label="Predictor (what times the step)", options=predictor_choices(),
            value=s.inputs.predictor, width=WIDTH,
        )  # fmt: skip
        self.reset_button = pn.widgets.Button(
            label="Reset to", width=WIDTH - 160, description="Place the starting partition again"
        )
        self._layer_rows = LayerTable(on_press=self._press, width=WIDTH, margin=0)
        self._layer_labels: list[dict] = []  # per layer: its name, size, hint and colour
        self._layer_note = LiveHTML(css=_CSS, margin=(0, 10), div_params={"width": WIDTH})
        self._layers_of = None  # the network the rows were built for
        self._busy = False  # a load is under way
        doc = pn.state.curdoc
        self._doc = doc if doc is not None and doc.session_context is not None else None

        self.network_select.param.watch(self._pick_network, "value")
        self.hardware_select.param.watch(self._pick_hardware, "value")
        self.load_button.on_click(lambda _: self.load())
        self.upload.param.watch(self._uploaded, "value")
        self.undo_button.on_click(lambda _: run_action(s.undo, notify=self.notify))
        self.redo_button.on_click(lambda _: run_action(s.redo, notify=self.notify))
        self.reset_button.on_click(
            lambda _: run_action(s.reset, self.reset_select.value, notify=self.notify)
        )
        self.predictor_select.param.watch(self._pick_predictor, "value")
        inputs = s.inputs.param
        inputs.watch(lambda e: setattr(self.predictor_select, "value", e.new), "predictor")
        s.watch(self._history_changed, inputs=["can_undo", "can_redo"], search=["running"])
        inputs.watch(
            self._loaded,
            ["network", "hardware", "network_spec", "hardware_spec", "partition_spec", "placer"],
        )
        s.shown.param.watch(self._mapping_changed, ["mapping"])
        self._history_changed()
        self._mapping_changed()

    # ------------------------------------------------------------ actions
    def load(self) -> bool:
        """Load what the form says (the text fields win over the lists). Returns whether
        it loaded (on a page: whether it started, ``_off_page``)."""
        network = self.network_text.value.strip() or self.network_select.value
        hardware = self.hardware_text.value.strip() or self.hardware_select.value
        partition, placer = self.partition_select.value or None, self.placer_select.value
        waiting = self._waiting()
        return self._off_page(
            lambda: self.state.prepare(
                network, hardware, partition_spec=partition, placer=placer, on_wait=waiting
            ),
            "loading",
        )

    def upload_file(self, filename: str, data: bytes) -> bool:
        """Load an uploaded mapping or network (``ExplorerState.upload``), like ``load``."""
        waiting = self._waiting()
        return self._off_page(
            lambda: self.state.prepare_upload(filename, data, on_wait=waiting),
            f"reading {filename}",
        )

    def _off_page(self, prepare, what: str) -> bool:
        """``prepare()`` — resolving, reading, partitioning and placing — in a worker thread
        on a page (``off_page``: a large network must not hold the server), then its
        result made current; a refusal or a failure is a notification. Returns whether it
        loaded (on a page: whether it started)."""
        done: list[bool] = []

        def adopt(prepared) -> None:
            self._loading(False)
            done.append(run_action(self.state.adopt, prepared, notify=self.notify))
            if done[-1]:
                for note in getattr(prepared, "notes", ()):
                    notify_info(note, self.inform)

        def failed(message: str) -> None:
            self._loading(False)
            notify_error(message, self.notify)
            done.append(False)

        self._loading(True)
        off_page(self._doc, self._reporting(prepare), adopt, failed, what=what,
                 name="meshscope-load")  # fmt: skip
        return done[0] if done else True

    def _reporting(self, prepare):
        """``prepare`` with its partitioner's progress (``engine.progress``) on the Load
        button, "Partitioning 42%", once per whole percent (a neuron-level partitioner on
        MobileNet V1 takes minutes)."""
        schedule = session_scheduler(self._doc)
        shown = [-1]

        def heard(fraction: float) -> None:  # (in the worker thread)
            percent = int(fraction * 100)
            if percent != shown[0]:
                shown[0] = percent
                schedule(lambda: self._show_progress(percent))

        def work():
            with reporting(heard):
                return prepare()

        return work

    def _waiting(self):
        """An ``on_wait`` for a load (called in its thread): the Load button says the load's
        place in the server's line, "Waiting: 2nd in line", until it starts."""
        schedule = session_scheduler(self._doc)

        def heard(place: int) -> None:
            schedule(lambda: self._show_place(place))

        return heard

    def _show_place(self, place: int) -> None:
        if self._busy:
            self.load_button.label = f"Waiting: {place_text(place)}" if place else "Loading…"

    def _show_progress(self, percent: int) -> None:
        if self._busy:  # (a report scheduled before the load ended is late)
            self.load_button.label = f"Partitioning {percent}%"

    def _loading(self, now: bool) -> None:
        self._busy = now
        if not now:
            self.load_button.label = LOAD
        self._history_changed()

    def change_cores(self, population: int, delta: int) -> bool:
        return run_action(self.state.change_layer_cores, population, delta, notify=self.notify)

    def _press(self, population: int, delta: int) -> None:
        if population < len(self._layer_labels):  # a row of the network shown
            self.change_cores(population, delta)

    def _mapping_file(self) -> io.StringIO:
        s = self.state
        data = s.mapping_json()  # (raises, as a notification, when nothing is loaded)
        # read by FileDownload after this call: the name of the mapping saved now
        self.download.filename = download_name(
            s.network.name, s.hardware.name, s.evaluation.latency_us, datetime.now(UTC)
        )
        return io.StringIO(data)

    # ------------------------------------------------------------ widget → state
    def _pick_network(self, event) -> None:
        if event.new:  # (the entry for another leaves the spec as it is)
            self.network_text.value = event.new

    def _pick_hardware(self, event) -> None:
        if event.new:
            self.hardware_text.value = event.new

    def _uploaded(self, event) -> None:
        if event.new is None:
            return  # cleared
        self.upload_file(self.upload.filename or "upload", event.new)
        self.upload.clear()  # the same file can be chosen again

    # ------------------------------------------------------------ state → widgets
    def _history_changed(self, *events) -> None:
        s = self.state
        self.undo_button.disabled = not s.inputs.can_undo
        self.redo_button.disabled = not s.inputs.can_redo
        self.load_button.disabled = bool(s.search.running) or self._busy

    def _loaded(self, *events) -> None:
        s = self.state
        self.download.filename = download_name(s.network.name, s.hardware.name)
        for select, text, spec in (
            (self.network_select, self.network_text, s.inputs.network_spec),
            (self.hardware_select, self.hardware_text, s.inputs.hardware_spec),
        ):
            choice = _spec_choice(spec, select.values)
            if select.value != choice:
                select.value = choice  # fills the text field: set it afterwards
            text.value = spec
        # a load from elsewhere (a scene) may change the partition and placer too
        parts = list(self.partition_select.options.values())
        self.partition_select.value = (
            s.inputs.partition_spec if s.inputs.partition_spec in parts else ""
        )
        if s.inputs.placer in self.placer_select.options:
            self.placer_select.value = s.inputs.placer

    def _mapping_changed(self, *events) -> None:
        s = self.state
        if s.network is not self._layers_of:
            self._build_layer_rows()
        counts = s.mapping.partition.cores_per_population
        layered = counts is not None
        self._layer_rows.visible = layered
        if not layered:
            self._layer_note.object = (
                '<div class="ms-note">This partition is not a per-layer split: choose a '
                "min or min+K partition and Load to change cores per layer.</div>"
            )
            return
        free = s.hardware.n_cores - int(sum(counts))
        self._layer_note.object = (
            f'<div class="ms-note">{int(sum(counts))} of {s.hardware.n_cores} cores in use. '
            "− and + rebuild the mapping with the reordering operator (Loihi 2 mapping ES): every "
            "other layer "
            "keeps its cores.</div>"
        )
        sizes = s.network.population_sizes
        rows = []
        for k, label in enumerate(self._layer_labels):
            n = int(counts[k])
            source = s.network.spike_source[k]  # no cores to give or take
            rows.append({
                **label, "count": n, "fewer": not (n <= 1 or source),
                "more": not (n >= int(sizes[k]) or free <= 0 or source),
            })  # fmt: skip
        if self._layer_rows.rows != rows:  # a swap changes no count: nothing to send
            self._layer_rows.rows = rows

    def _build_layer_rows(self) -> None:
        net = self.state.network
        colors = population_colors(net.n_populations)
        self._layer_labels = []
        nir = net.params.get("nir", {})  # a NIR graph's node types and shapes
        for k, name in enumerate(net.population_names):
            node = nir.get(name)
            kind = f" · {node['type']} {'×'.join(map(str, node['shape']))}" if node else ""
            source = net.spike_source[k]  # runs on no core: its spikes enter at the port
            size = f"{int(net.population_sizes[k]):,} {'· source' if source else 'neurons'}{kind}"
            hint = f"{name}: {size}" + (
                " (a spike source: no cores; its spikes enter at the input port)" if source else ""
            )  # the whole line, where a long shape is cut short
            self._layer_labels.append(
                {"name": name, "size": size, "hint": hint, "color": colors[k]}
            )
        self._layers_of = net

    def __panel__(self):
        note = pn.pane.HTML(
            pn.bind(lambda text: f'<div class="ms-aside" data-testid="sidebar-aside">'
                    f"{escape(text)}</div>", self.param.aside),
            visible=self.param.aside.rx.bool(), stylesheets=[_CSS], margin=(10, 10, 0, 10),
            width=WIDTH,
        )  # fmt: skip
        body = self._body()
        self.param.watch(lambda e: setattr(body, "styles", {"opacity": "0.45"} if e.new else {}),
                         "aside")  # fmt: skip
        return pn.Column(note, body, width=WIDTH + 20, margin=0)

    def _pick_predictor(self, event) -> None:
        if event.new == self.state.inputs.predictor:
            return
        if not run_action(self.state.set_predictor, event.new, notify=self.notify):
            self.predictor_select.value = self.state.inputs.predictor  # it keeps the one it had

    def _body(self):
        return pn.Column(
            _section("Network and hardware"),
            self.network_select,
            self.network_text,
            self.hardware_select,
            self.hardware_text,
            pn.Row(self.partition_select, self.placer_select, margin=0),
            self.load_button,
            _section("Mapping file"),
            _note("Upload a mapping (.json) or a network (.npz, .hgr, NIR .nir):"),
            self.upload,
            self.download,
            _section("Edit"),
            pn.Row(self.undo_button, self.redo_button, margin=0),
            pn.Row(self.reset_button, self.reset_select, margin=0),
            self.predictor_select,
            _section("Cores per layer"),
            self._layer_rows,
            self._layer_note,
            width=WIDTH + 20,
            margin=(0, 0, 20, 0),
        )
