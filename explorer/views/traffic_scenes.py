"""The Traffic tab's scenes, and the tab that composes them with the run.

A scene (``explorer.scenes``) sets the Traffic view up to show one thing about congestion
and starts its simulation (and its sweep, or its comparison of placements); a scene that
loads a mapping replaces the session's (asking first when the user edited it: Undo brings
it back). ``SceneBar`` holds the scenes' buttons, the scene's text, the comparison, and
the card that shares the setup as a link or a file or opens one; ``TrafficTab`` is what
the Traffic tab shows: the scenes above the run (``TrafficView``), sharing below it.
"""

from __future__ import annotations

import io
import json
from dataclasses import replace
from html import escape

import numpy as np
import panel as pn
import param

from engine.errors import MeshScopeError
from engine.mapping.placement.fill import MEASURED_US
from explorer.scenes import SCENES, Scene, encode_scene, parse_scene
from explorer.state import ExplorerState
from explorer.traffic_runner import SOURCES, TrafficRunner, compare_placers
from explorer.uploads import upload_json
from explorer.views._page import LiveHTML, notify_error, notify_when_up, off_page
from explorer.views.glossary import with_terms
from explorer.views.traffic import TrafficView
from explorer.views.traffic_frames import TRAFFIC_CSS
from explorer.views.upload import UploadInput

__all__ = ["SCENE_LABELS", "SceneBar", "TrafficTab", "compare_table"]

SCENE_FILE = "a scene file (.json, as Scene as JSON writes it)"
_SCENE_BUTTON_CSS = ":host .bk-btn { font-size: 12px; padding: 3px 9px; }"
SCENE_LABELS = {
    "uniform-below": "uniform, below saturation", "uniform-beyond": "uniform, beyond",
    "hotspot": "hotspot", "transpose-xy": "transpose, XY", "transpose-yx": "transpose, YX",
    "transpose-o1turn": "transpose, O1TURN", "square": "layer as a square",
    "x-shape": "… as an X", "diagonal": "… on a diagonal",
    "heuristics": "the four fill orders",
}  # fmt: skip


class SceneBar(pn.viewable.Viewer):
    """The scenes of a ``TrafficView``: load one (a button, a link, a file), share the
    view's setup as one."""

    traffic = param.ClassSelector(class_=TrafficView, doc="the view a scene sets up and runs")
    loading = param.Boolean(default=False, doc="a scene's mapping is being loaded")
    scene = param.ClassSelector(class_=Scene, default=None, allow_None=True,
                                doc="the scene last loaded")  # fmt: skip

    def __init__(self, **params):
        super().__init__(**params)
        self.state: ExplorerState = self.traffic.state
        self._comparer = TrafficRunner(
            self.traffic.schedule, what="the comparison", gate=self.state.gate
        )
        self._queued: Scene | None = None  # a scene clicked while a run was under way
        self._build_widgets()
        self.traffic.param.watch(self._after_run, "running")
        self.param.watch(self._after_run, "loading")
        self.traffic.param.watch(self._on_run, "run")

    def _build_widgets(self) -> None:
        self._scene_note = ""  # the scene's text while another one loads
        self._scene_buttons = []
        for name, scene in SCENES.items():
            button = pn.widgets.Button(
                label=SCENE_LABELS.get(name, name), description=None, margin=(2, 3),
                color="light", stylesheets=[_SCENE_BUTTON_CSS],
            )  # fmt: skip
            button.on_click(lambda event, scene=scene: self._on_scene(scene))
            self._scene_buttons.append(button)
        self._scene_text = LiveHTML(
            "<span class='muted'>A scene sets up a simulation that shows one thing about "
            "congestion, with a few words on what to look for. Share yours as a link or a "
            "file.</span>",
            css=TRAFFIC_CSS, div_params={"css_classes": ["traffic-summary"], "width": 620},
            width=620,
        )  # fmt: skip
        self._compare = LiveHTML(
            "", css=TRAFFIC_CSS, div_params={"css_classes": ["traffic-summary"]},
            margin=(0, 0, 0, 16),
        )  # fmt: skip
        self._share_link = pn.widgets.TextInput(placeholder="link to this setup",
                                                width=200, margin=(2, 5))  # fmt: skip
        # the title and notes a shared setup carries, editable (a scene loaded fills them)
        self._title_box = pn.widgets.TextInput(
            label="scene title", placeholder="A shared setup", width=300, margin=(2, 5),
            max_length=120,
        )  # fmt: skip
        self._notes_box = pn.widgets.TextAreaInput(
            label="notes for the class", placeholder="what to look for (saved in the link and "
            "the file)", width=420, height=90, margin=(2, 5), max_length=2000,
        )  # fmt: skip
        self._notes_box.param.watch(self._on_notes, "value")
        self._title_box.param.watch(self._on_notes, "value")
        share = pn.widgets.Button(label="Share as link", width=200, margin=(2, 5))
        share.on_click(lambda event: self._on_share())
        self._scene_download = pn.widgets.FileDownload(
            callback=self._scene_json, filename="scene.json", label="Scene as JSON",
            embed=False, width=200, margin=(2, 5), variant="outline",
        )  # fmt: skip
        self._scene_upload = UploadInput(
            access=self.state.access, accept=".json", width=200, margin=(2, 5)
        )
        self._scene_upload.param.watch(self._on_scene_file, "value")
        self._share = pn.Card(
            pn.FlexBox(
                pn.Column(self._title_box, self._notes_box, margin=0),
                pn.Column(share, self._share_link, margin=0), self._scene_download,
                pn.Column(
                    pn.pane.HTML("<div class='traffic-summary'>Open a scene file:</div>",
                                 stylesheets=[TRAFFIC_CSS], margin=(4, 5, 0, 5)),
                    self._scene_upload, margin=0,
                ),
                flex_wrap="wrap", sizing_mode="stretch_width", margin=0,
            ),
            title="Share this setup, or open one", collapsed=True, margin=(10, 5),
            sizing_mode="stretch_width",
        )  # fmt: skip

        # the question wraps within the tab and the buttons wrap below it when the row is
        # narrow: an HTML model without a width is laid out as wide as its text (issue 59:
        # the buttons sat at x = 1356–1666 px of a 1366-px window)
        self._ask_text = LiveHTML(
            "", css=TRAFFIC_CSS, div_params={"css_classes": ["traffic-summary"], "width": 620},
            width=620, margin=(4, 5),
        )  # fmt: skip
        self._ask_yes = pn.widgets.Button(label="Load the scene", color="warning",
                                          margin=(2, 5), width=150)  # fmt: skip
        self._ask_no = pn.widgets.Button(label="Keep my mapping", margin=(2, 5), width=150)
        self._ask_no.on_click(lambda event: self._answer(None))
        self._asked: Scene | None = None
        self._ask_yes.on_click(lambda event: self._answer(self._asked))
        self._ask = pn.FlexBox(
            self._ask_text, pn.Row(self._ask_yes, self._ask_no, margin=0, align="center"),
            visible=False, margin=(0, 5), css_classes=["scene-ask"], flex_wrap="wrap",
            align_items="center", sizing_mode="stretch_width",
        )  # fmt: skip

    def _on_scene(self, scene: Scene) -> None:
        """A scene's button: a scene that would replace the user's edited mapping asks first
        (Undo brings the mapping back either way)."""
        s = self.state
        if scene.kind == "mapping" and s.loaded and s.edited:
            self._asked = scene
            self._ask_text.object = (
                f"<span data-testid='scene-ask'><b>{escape(scene.title)}</b> loads "
                f"{escape(scene.network)} on {escape(scene.hardware)} in place of your edited "
                f"mapping of {escape(s.network.name)}. Load it? (Undo brings your mapping "
                "back; Save mapping keeps it as a file.)</span>"
            )
            self._ask.visible = True
            return
        self._answer(scene)

    def _answer(self, scene: Scene | None) -> None:
        self._ask.visible, self._asked = False, None
        if scene is not None:
            with pn.io.hold():
                self.load_scene(scene)

    def load_scene(self, scene: Scene) -> bool:
        """Set everything up as ``scene`` says and start its simulation (and its sweep or
        comparison); a scene that cannot load is a notification and changes nothing.

        Every name the scene holds goes through the session's ``access`` first (refused at
        once); a mapping scene's network is then resolved, partitioned and placed in a
        worker thread (``off_page``) — a page opened with a scene link is answered at once
        — and the rest follows on the page. Returns whether the scene was taken."""
        s, traffic = self.state, self.traffic
        try:
            s.access.scene(scene)
        except MeshScopeError as e:
            self._scene_failed(scene, str(e))
            return False
        if traffic.running or self.loading:
            # a run cannot be stopped half-way: the scene waits for it (the last one clicked
            # wins), and says so where the scene's text goes (issue 59: clicks were refused
            # for seconds with only a fading notification)
            self._queued = scene
            traffic.curve.cancel(f": the scene {escape(scene.title)} comes next")
            self._scene_text.object = (
                f"<span class='muted' data-testid='scene-queued'>Next: <b>"
                f"{escape(scene.title)}</b>, once the run under way ends…</span>"
            )
            return True
        self._queued = None
        traffic.curve.cancel(f": the scene {escape(scene.title)} took over")
        if scene.kind != "mapping":
            self._set_scene(scene)
            return True
        self.loading = True
        self._scene_note = self._scene_text.object
        self._scene_text.object = (
            f"<span class='muted'>Loading the scene <b>{escape(scene.title)}</b>…</span>"
        )
        off_page(
            traffic.doc,
            lambda: s.prepare(scene.network, scene.hardware, partition_spec=scene.partition,
                              placer=scene.placer),  # fmt: skip
            lambda prepared: self._scene_loaded(scene, prepared),
            lambda message: self._scene_failed(scene, message),
            what="loading the scene", name="meshscope-scene",
        )  # fmt: skip
        return True

    def _after_run(self, event=None) -> None:
        """The run under way (or the scene loading) ended: load the scene clicked meanwhile."""
        scene = self._queued
        if scene is None or self.traffic.running or self.loading:
            return
        self._queued = None
        with pn.io.hold():
            self.load_scene(scene)

    def _scene_loaded(self, scene: Scene, prepared) -> None:
        with pn.io.hold():
            try:
                self.state.adopt(prepared)
            except MeshScopeError as e:
                self._scene_failed(scene, str(e))
                return
            self.loading = False
            self._set_scene(scene)

    def _scene_failed(self, scene: Scene, message: str) -> None:
        if self.loading:
            self.loading = False
            self._scene_text.object = self._scene_note
        notify_when_up(f"The scene '{scene.title}' cannot load: {message}")

    def _set_scene(self, scene: Scene) -> None:
        """The Traffic view's settings as ``scene`` says (its mapping loaded), then run."""
        settings = {"seed": scene.seed, "mode": scene.mode, "multicast": scene.multicast}
        if scene.kind == "synthetic":
            settings.update(
                source=SOURCES[1], pattern=scene.pattern, side=scene.side, rows=scene.rows,
                rate=scene.rate, packet_flits=scene.packet_flits, cycles=scene.cycles,
                routing=scene.routing,
            )  # fmt: skip
        else:
            settings["source"] = SOURCES[0]
        traffic = self.traffic
        traffic.param.update(**settings)
        self.scene = scene
        self._title_box.value, self._notes_box.value = scene.title, scene.text
        self._scene_text.object = (
            f"<span data-testid='scene-text'><b>{escape(scene.title)}.</b> "
            f"{with_terms(escape(scene.text))}</span>"
        )
        self._compare.object = ""
        traffic.start_run()
        if scene.sweep and scene.kind == "synthetic":
            traffic.curve.start()
        if scene.compare and scene.kind == "mapping":
            self._compare.object = "Comparing the placements…"
            measured = scene.name == "heuristics"
            mapped, limit = self.state.mapped(), self.state.access.cycles
            self._comparer.start(
                lambda cancel: compare_placers(mapped, scene, limit_cycles=limit),
                lambda rows: self._show_compare(rows, measured),
                lambda message: (notify_error(message), self._show_compare([], False)),
            )  # fmt: skip

    def current_scene(self) -> Scene:
        """The Traffic view's setup as a scene (the last scene loaded, if nothing changed)."""
        s, t = self.state, self.traffic
        title = " ".join(self._title_box.value.split()) or "A shared setup"
        notes = self._notes_box.value.strip() or "(no notes yet)"
        common = {"seed": t.seed, "title": title, "text": notes}
        if t.source == SOURCES[1]:
            scene = Scene(
                kind="synthetic", pattern=t.pattern, side=t.side, rows=t.rows, rate=t.rate,
                packet_flits=t.packet_flits, cycles=t.cycles, routing=t.routing, **common,
            )  # fmt: skip
        else:
            scene = Scene(
                kind="mapping", network=s.inputs.network_spec, hardware=s.inputs.hardware_spec,
                placer=s.inputs.placer, partition=s.inputs.partition_spec, mode=t.mode,
                multicast=t.multicast, **common,
            )  # fmt: skip
        last = self.scene
        if last is not None:
            same = replace(scene, sweep=last.sweep, compare=last.compare)
            if same == last:
                return last
            if replace(same, title=last.title, text=last.text) == last:  # new words only
                return replace(same, name="")
        return scene

    def _on_notes(self, event) -> None:
        """The lecturer's title or notes: the scene's text shows them as typed (escaped)."""
        if self.scene is None and not (self._title_box.value or self._notes_box.value):
            return
        title = " ".join(self._title_box.value.split()) or "A shared setup"
        notes = self._notes_box.value.strip() or "(no notes yet)"
        self._scene_text.object = (
            f"<span data-testid='scene-text'><b>{escape(title)}.</b> "
            f"{with_terms(escape(notes))}</span>"
        )

    def _on_run(self, event) -> None:
        """A new run is shown: a scene's text or a sweep made for other settings is marked
        as such, not left beside it as if it spoke of this run (issue 59)."""
        last, traffic = self.scene, self.traffic
        if event.new is None:
            return
        if last is not None and self._differs(last):
            self.scene = None
            self._compare.object = ""
            if (self._title_box.value, self._notes_box.value) == (last.title, last.text):
                self._title_box.value = self._notes_box.value = ""
                self._scene_text.object = (
                    "<span data-testid='scene-stale' class='muted'>The settings changed since "
                    f"the scene <b>{escape(last.title)}</b>; its text spoke of that setup, not "
                    "of this run. Write your own notes under <i>Share this setup</i>.</span>"
                )
            # else: the lecturer's own notes stay, and go with this setup when shared
        if traffic.curve.stale():
            traffic.curve.clear(
                "The curve shown was swept with other settings; it is gone. Sweep again for "
                "this setup."
            )

    def _differs(self, scene: Scene) -> bool:
        """Whether the tab's settings are no longer ``scene``'s."""
        now = self.current_scene()
        keep = {"title": scene.title, "text": scene.text, "sweep": scene.sweep,
                "compare": scene.compare, "name": scene.name}  # fmt: skip
        return replace(now, **keep) != scene

    def share_query(self) -> str:
        """The ``?scene=`` value of the current setup: a built-in's name, or the scene."""
        scene = self.current_scene()
        return scene.name if scene.name in SCENES else encode_scene(scene)

    def _on_share(self) -> None:
        loc = pn.state.location
        base = ""
        if loc is not None and loc.hostname:
            port = f":{loc.port}" if loc.port else ""
            base = f"{loc.protocol}//{loc.hostname}{port}{loc.pathname}"
        self._share_link.value = f"{base}?scene={self.share_query()}"

    def _scene_json(self) -> io.StringIO:
        return io.StringIO(json.dumps(self.current_scene().to_dict(), indent=2) + "\n")

    def _on_scene_file(self, event) -> None:
        data, name = event.new, self._scene_upload.filename or "the file"
        if data is None:
            return  # cleared
        try:
            self.state.access.check_upload(name, len(data))
            scene = parse_scene(upload_json(name, data, SCENE_FILE))
        except MeshScopeError as e:
            notify_error(str(e) if str(e).startswith(name) else f"{name}: {e}")
            return
        with pn.io.hold():
            self.load_scene(scene)

    def _show_compare(self, rows, measured: bool) -> None:
        self._compare.object = (
            compare_table(rows, MEASURED_US if measured else None) if rows else ""
        )

    def __panel__(self):
        """The scenes' buttons, the question before a scene replaces an edited mapping,
        the scene's text and its comparison (``share``: the card that goes below the run)."""
        return pn.Column(
            pn.FlexBox(
                pn.pane.Markdown("**Scenes**", margin=(8, 5, 0, 5)),
                *self._scene_buttons,
                flex_wrap="wrap",
                sizing_mode="stretch_width",
                margin=0,
            ),
            self._ask,
            pn.FlexBox(
                self._scene_text,
                self._compare,
                margin=(0, 5, 4, 5),
                flex_wrap="wrap",
                sizing_mode="stretch_width",
            ),
            margin=0,
            sizing_mode="stretch_width",
        )

    @property
    def share(self) -> pn.Card:
        """The card that shares the setup as a link or a file, or opens a scene file."""
        return self._share


def compare_table(rows, measured: dict | None = None) -> str:
    """An HTML table of (placer, analytic µs, simulated µs) rows, each with its rank, and
    the measured µs (and rank) of the placers ``measured`` knows."""

    def ranks(values):
        order = np.argsort(np.argsort(values, kind="stable"), kind="stable") + 1
        return order.tolist()

    analytic = ranks([r[1] for r in rows])
    simulated = ranks([r[2] for r in rows])
    hw = ranks([measured[r[0]] for r in rows]) if measured else None
    head = "<tr><th>placement</th>" + ("<th>on the chip</th>" if measured else "")
    head += "<th>analytic</th><th>simulated</th></tr>"
    body = []
    for i, (placer, a, sim) in enumerate(rows):
        cells = f"<td>{escape(placer)}</td>"
        if measured:
            cells += f"<td>{measured[placer]:.2f} ({hw[i]})</td>"
        cells += f"<td>{a:,.2f} ({analytic[i]})</td><td>{sim:,.2f} ({simulated[i]})</td>"
        body.append(f"<tr>{cells}</tr>")
    return (
        "<table class='compare' data-testid='scene-compare'>"
        f"<caption>µs per step (rank)</caption>{head}{''.join(body)}</table>"
    )


class TrafficTab(pn.viewable.Viewer):
    """The Traffic tab: scenes, then the run — mesh, player and histogram in the first
    screen, under the one line of settings — then the walk, the load curve and sharing."""

    def __init__(self, state: ExplorerState, **params):
        super().__init__(**params)
        self.traffic = TrafficView(state=state)
        self.scenes = SceneBar(traffic=self.traffic)

    def load_scene(self, scene: Scene) -> bool:
        """``SceneBar.load_scene``: set the tab up as ``scene`` says and run it."""
        return self.scenes.load_scene(scene)

    def __panel__(self):
        return pn.Column(
            self.scenes, self.traffic, self.scenes.share, margin=0, sizing_mode="stretch_width"
        )
