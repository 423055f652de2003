"""The page, its sidebar controls, metric cards and session persistence, without a browser."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import panel as pn
import pytest
from panel.models import markup as panel_markup
from panel.models.reactive_html import DOMEvent

from engine.errors import SpecError
from engine.hardware import preset_names
from engine.mapping.partition import partitioners
from engine.mapping.placement import placers
from engine.specs import demo_files
from engine.workloads import workloads
from explorer.access import UPLOAD_BYTES, ClientAccess, ClientLimits, message_bytes
from explorer.app import (
    SnapshotStore,
    build_app,
    lazy_tabs,
    serve,
    session_state,
    tabs,
    websocket_origins,
)
from explorer.state import ExplorerState
from explorer.tabs import titles
from explorer.views._page import fill_when_shown
from explorer.views.controls import (
    ControlsView,
    download_name,
    hardware_choices,
    network_choices,
    partition_choices,
    placer_choices,
    run_action,
)
from explorer.views.metrics import (
    METRICS,
    TERM_LABELS,
    MetricsView,
    format_change,
    format_quantity,
    metric_values,
)

NET = "mlp:widths=256-512-256-10"


def _texts(viewable) -> list[str]:
    """The markup of every HTML pane, alert and live (``LiveHTML``) text on a page."""
    out = []
    for obj in viewable.select(lambda o: isinstance(o, (pn.pane.HTML, pn.pane.Alert))):
        out.append(str(obj.object))
    for obj in viewable.select(pn.pane.Bokeh):
        if isinstance(obj.object, panel_markup.HTML):
            out.append(html.unescape(obj.object.text))
    return out


def _figures(viewable) -> list:
    return [
        p for p in viewable.select(pn.pane.Bokeh) if not isinstance(p.object, panel_markup.HTML)
    ]


# ------------------------------------------------------------------ metric cards
@pytest.mark.parametrize(
    ("x", "text"),
    [(34.9531, "34.95"), (1.01618, "1.016"), (0.0123456, "0.01235"), (999.96, "1,000"),
     (20753.06, "20,753"), (0.0, "0")],
)  # fmt: skip
def test_format_quantity(x, text):
    assert format_quantity(x) == text


@pytest.mark.parametrize(
    ("pct", "text"), [(-12.51, "−12.5 %"), (0.01, "0 %"), (3.0, "+3.0 %"), (-0.06, "−0.1 %")]
)
def test_format_change(pct, text):
    assert format_change(pct) == text


def test_metric_cards_show_the_evaluation(demo_state):
    ev = demo_state.evaluation
    values = metric_values(ev, demo_state.hardware, demo_state.shown.start_evaluation)
    assert list(values) == list(METRICS)
    assert values["latency"][1] == format_quantity(ev.latency_us)
    assert values["change"][1] == "0 %"
    assert values["energy"][1] == format_quantity(ev.energy_uj)
    assert values["power"][1] == format_quantity(ev.power_w)
    assert values["bottleneck"][1] == TERM_LABELS[ev.bottleneck]
    assert values["cores"][1] == str(ev.cores_used)
    html = MetricsView(state=demo_state).html
    for key in METRICS:
        assert f'data-testid="metric-{key}-value"' in html
    assert f">{format_quantity(ev.latency_us)}<" in html


def improving_swap(state: ExplorerState) -> tuple[int, int]:
    """Two cores whose swap (or move, onto an empty core) makes the step faster."""
    from engine.pipeline import evaluator

    ev = evaluator(state.mapped())
    base = ev.latency_us
    for a in state.mapping.placement.cores.tolist():
        for b in range(state.hardware.n_cores):
            faster = ev.swap_cores(a, b)[0] < base - 1e-9
            ev.swap_cores(a, b)  # back
            if faster:
                return a, b
    raise AssertionError("no single swap improves this mapping")


def test_cards_follow_the_state_and_show_the_change():
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    cards = MetricsView(state=state)
    state.swap_cores(*improving_swap(state))
    assert f">{format_quantity(state.evaluation.latency_us)}<" in cards.html
    assert f">{format_change(state.change_pct())}<" in cards.html
    assert "metric-card better" in cards.html
    state.load("linear-dense:M=4,N=64", "loihi2")
    assert f">{format_quantity(state.evaluation.latency_us)}<" in cards.html
    assert ">8<" in cards.html  # cores used: 4 + 4
    assert ">0 %<" in cards.html  # a new start


def test_cards_mark_numbers_that_rest_on_illustrative_constants(tmp_path):
    """loihi2's timing constants are illustrative: latency, energy, power and the bound say
    so, naming the constants; once calibrated (fitted sources), the latency's badge goes."""
    from dataclasses import replace

    from engine.hardware import load_hardware
    from engine.hardware.provenance import LATENCY_CONSTANTS, write_preset

    state = ExplorerState.from_specs(NET, "loihi2")
    cards = MetricsView(state=state)
    for key in ("latency", "energy", "power", "bottleneck"):
        assert f'data-testid="metric-{key}-illustrative"' in cards.html
    assert 'data-testid="metric-cores-illustrative"' not in cards.html
    assert "router_bits_per_us" in cards.html and "meshscope calibrate" in cards.html
    hw = load_hardware("loihi2")
    fitted = dict(hw.sources) | {k: "fitted: runs.csv, 4 points, ±1 %" for k in LATENCY_CONSTANTS}
    write_preset(
        tmp_path / "fitted.toml", replace(hw, name="fitted", sources=tuple(fitted.items()))
    )
    access = ClientAccess.for_server(allow_files=[str(tmp_path)])
    state = ExplorerState.from_specs(NET, str(tmp_path / "fitted.toml"), access=access)
    cards = MetricsView(state=state)
    assert 'data-testid="metric-latency-illustrative"' not in cards.html
    assert 'data-testid="metric-energy-illustrative"' in cards.html  # energies still guessed


def test_cards_show_the_search_best_while_it_is_followed(demo_state):
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    cards = MetricsView(state=state)
    other = ExplorerState.from_specs("sparse-mlp-1", "loihi2", placer="spread-col").evaluation
    state.search.param.update(running=True, best_on_mesh=True, best_evaluation=other)
    assert "Latency (search best)" in cards.html
    assert f">{format_quantity(other.latency_us)}<" in cards.html
    state.search.follow_best = False
    assert f">{format_quantity(state.evaluation.latency_us)}<" in cards.html


# ------------------------------------------------------------------ the page
def test_build_app_shows_the_demo():
    page = build_app("sparse-mlp-1", "loihi2")
    text = " ".join(_texts(page))
    assert "sparse-mlp-1" in text and "loihi2" in text
    # the title counts the neurons on cores and the inputs apart, as `info --json` does
    assert "(11,264 neurons on cores and 1,024 inputs, 7 populations)" in text
    assert 'data-testid="metric-latency-value"' in text
    assert len(_figures(page)) >= 1  # the mesh, and the other tabs' plots
    assert not page.select(pn.pane.Alert)
    assert page.select(pn.Tabs)[0]._names == titles()  # every tab of the registry, in order


def test_a_hidden_tab_is_built_when_first_shown_and_once():
    built = []

    def view(name):
        def build():
            built.append(name)
            return pn.pane.HTML(name)

        return build

    page_tabs = lazy_tabs([("A", pn.pane.HTML("a")), ("B", view("b")), ("C", view("c"))])
    assert built == [] and isinstance(page_tabs[2], pn.Spacer)
    page_tabs.active = 2  # what a click on its title does
    assert built == ["c"] and page_tabs[2].object == "c"
    assert page_tabs._names == ["A", "B", "C"]
    page_tabs.active = 0
    page_tabs.active = 2
    assert built == ["c"]
    lazy_tabs([("A", pn.pane.HTML("a")), ("B", view("b"))], active=1)  # shown at once: built
    assert built == ["c", "b"]


def test_a_hidden_part_is_filled_when_first_shown():
    parts = [pn.pane.HTML("a"), pn.widgets.Button(label="b")]
    hidden = pn.Row(visible=False)
    fill_when_shown(hidden, parts)
    assert [type(o) for o in hidden.objects] == [pn.Spacer]  # no models to build and send
    hidden.visible = True
    assert hidden.objects == parts
    hidden.visible = False
    hidden.visible = True
    assert hidden.objects == parts
    shown = pn.Column()
    fill_when_shown(shown, parts)
    assert shown.objects == parts


def test_the_mesh_tab_comes_first():
    state = ExplorerState.from_specs(NET, "loihi2")
    titles = [title for title, _ in tabs(state)]
    assert titles[0] == "Mesh"


@pytest.mark.parametrize(
    ("network", "hardware", "mapping", "says"),
    [
        ("no-such-network", "loihi2", None, "unknown network 'no-such-network'"),
        ("sparse-mlp-1", "mesh:0x4", None, "must be at least 1"),
        ("sparse-mlp-1", "loihi2", "/nonexistent/mapping.json", "cannot read mapping file"),
        ("linear-dense:M=4,N=64", "mesh:2x2", None, "needs 8 cores"),
    ],
)
def test_bad_input_gives_a_page_that_says_why(network, hardware, mapping, says):
    page = build_app(network, hardware, mapping)
    alerts = page.select(pn.pane.Alert)
    assert len(alerts) == 1 and alerts[0].alert_type == "danger"
    assert says in alerts[0].object
    assert "meshscope list" in alerts[0].object
    assert not _figures(page)


def test_websocket_origins():
    assert websocket_origins("127.0.0.1", 5077) == ["127.0.0.1:5077", "localhost:5077"]
    assert "localhost:5006" in websocket_origins("localhost", 5006)
    assert websocket_origins("0.0.0.0", 80, ("lab-pc:80",)) == ["lab-pc:80"]
    with pytest.raises(SpecError, match="--allow-origin"):
        websocket_origins("0.0.0.0", 80)  # never "*": any site's page could drive the server


@pytest.mark.parametrize("upload_bytes", [UPLOAD_BYTES, 80 * 2**20])
def test_the_server_takes_a_message_with_the_largest_upload(monkeypatch, upload_bytes):
    """Bokeh's default bound (20 MB) closed the page of a 15 MB upload: ``serve`` sets it
    from the clients' upload limit (the page refuses larger files, test_upload.py)."""
    import explorer.app

    asked = {}
    monkeypatch.setattr(explorer.app, "_warm_up", lambda *args: None)
    monkeypatch.setattr(explorer.app, "settle_heap", lambda: None)
    monkeypatch.setattr(explorer.app, "start_server", lambda app, **options: asked.update(options))
    serve(NET, "loihi2", show=False, limits=ClientLimits(upload_bytes=upload_bytes))
    largest = 4 * -(-upload_bytes // 3)  # the file in base64
    assert asked["websocket_max_message_size"] == message_bytes(upload_bytes) > largest


# ------------------------------------------------------------------ persistence
def test_a_session_keeps_its_snapshot_up_to_date():
    store = SnapshotStore()
    state, token = session_state(NET, "loihi2", store=store)
    assert store.get(token)["mapping"] == state.snapshot()["mapping"]
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[2]))
    assert store.get(token)["mapping"]["placement"] == state.snapshot()["mapping"]["placement"]


def test_a_reload_restores_the_hand_tuned_mapping_under_a_new_token():
    store = SnapshotStore()
    state, token = session_state("sparse-mlp-1", "loihi2", store=store)
    state.swap_cores(*improving_swap(state))
    json.dumps(store.get(token))  # a snapshot is plain data

    again, token2 = session_state("sparse-mlp-1", "loihi2", token=token, store=store)
    assert token2 != token
    np.testing.assert_array_equal(again.mapping.placement.cores, state.mapping.placement.cores)
    assert again.evaluation.latency_us == state.evaluation.latency_us
    assert again.change_pct() == pytest.approx(state.change_pct())  # the start survives too
    assert again.change_pct() < 0
    # the reloaded page edits its own copy: the first session's snapshot stays as it was
    c = again.mapping.placement.cores
    again.swap_cores(int(c[1]), int(c[2]))
    assert store.get(token)["mapping"] == state.snapshot()["mapping"]
    assert store.get(token2)["mapping"] == again.snapshot()["mapping"]


def test_a_tuned_partition_survives_a_reload():
    store = SnapshotStore()
    state, token = session_state(NET, "loihi2", store=store)
    state.change_layer_cores(1, +1)
    again, _ = session_state(NET, "loihi2", token=token, store=store)
    assert list(again.mapping.partition.cores_per_population) == list(
        state.mapping.partition.cores_per_population
    )
    assert again.evaluation.latency_us == state.evaluation.latency_us
    assert again.shown.start_evaluation.latency_us == state.shown.start_evaluation.latency_us


def test_unknown_or_stale_tokens_start_from_the_specs():
    store = SnapshotStore()
    state, _ = session_state(NET, "loihi2", token="no-such-token", store=store)
    assert state.evaluation.latency_us == state.shown.start_evaluation.latency_us
    store.put("stale", {"network_spec": "no-such-network", "hardware_spec": "loihi2"})
    state, _ = session_state(NET, "loihi2", token="stale", store=store)
    assert state.network.name.startswith("mlp")


def test_two_sessions_get_their_own_tokens_and_states():
    store = SnapshotStore()
    a, ta = session_state(NET, "loihi2", store=store)
    b, tb = session_state(NET, "loihi2", store=store)
    assert ta != tb and a is not b
    c = a.mapping.placement.cores
    a.swap_cores(int(c[0]), int(c[2]))
    assert store.get(tb)["mapping"] == b.snapshot()["mapping"]
    assert store.get(ta)["mapping"] != store.get(tb)["mapping"]


def test_the_store_forgets_the_oldest_sessions():
    store = SnapshotStore(limit=2)
    for token in "abc":
        store.put(token, {"t": token})
    assert store.get("a") is None and store.get("c") == {"t": "c"} and len(store) == 2


# ------------------------------------------------------------------ sidebar controls
def test_choices_come_from_the_registries():
    nets = network_choices()
    assert set(nets["generated workloads"]) == set(workloads)
    assert list(nets["demo files"]) == [p.name for p in demo_files()]
    assert [v for v in hardware_choices().values() if v] == preset_names()
    parts = partition_choices()
    assert {"min", "min+1", "min+2", "natural", "min@rows", "min@tiles"} <= set(parts.values())
    assert parts["default"] == ""
    assert all(
        name in parts.values() for name in partitioners if partitioners.grammar(name) == name
    )
    choices = placer_choices()
    assert choices[: len(placers)] == list(placers)
    assert "spectral+force" in choices and "pairs-x+force" not in choices


def test_download_names_are_file_names():
    assert download_name("sparse-mlp-1") == "sparse-mlp-1-mapping.json"
    assert download_name("qubo:n=2000,seed=0") == "qubo_n_2000_seed_0-mapping.json"
    when = datetime(2026, 12, 7, 21, 17, 30, tzinfo=UTC)
    assert (
        download_name("qubo:n=2000,seed=0", "mesh:8x8", 34.954, when)
        == "qubo_n_2000_seed_0_mesh_8x8_34.95us_2026-12-07-2117-mapping.json"
    )


def test_a_saved_mapping_is_named_for_what_it_is(controls):
    """Network, hardware, the latency saved and the time: not one fixed name (issue 57)."""
    state, view, _ = controls
    data = view._mapping_file().read()
    name = view.download.filename
    latency = f"{state.evaluation.latency_us:.2f}us"
    assert name.startswith(f"mlp_widths_256-512-256-10_density_0.15_loihi2_{latency}_20")
    assert re.fullmatch(r".*_\d{4}-\d{2}-\d{2}-\d{4}-mapping\.json", name)
    assert json.loads(data)  # the file itself is unchanged


@pytest.fixture
def controls():
    state = ExplorerState.from_specs(NET, "loihi2", partition_spec=None)
    errors: list[str] = []
    return state, ControlsView(state=state, notify=errors.append), errors


def test_load_uses_the_form_and_the_text_field_wins(controls):
    state, view, errors = controls
    view.network_select.value = "linear-dense"
    assert view.network_text.value == "linear-dense"  # picking fills the text field
    view.network_text.value = "linear-dense:M=2,N=64"
    view.partition_select.value = "natural"
    view.placer_select.value = "spread-row"
    assert view.load() and not errors
    assert state.network.n_neurons == 4 * 64 and state.inputs.placer == "spread-row"
    assert state.inputs.partition_spec == "natural"
    assert view.download.filename == download_name(state.network.name, state.hardware.name)


def test_a_load_shows_its_partitioners_progress_on_the_button(controls):
    """A neuron-level partitioner reports how far it has got (``engine.progress``); the Load
    button says so while it works ("Partitioning 100%") and is "Load" again after."""
    state, view, errors = controls
    labels = []
    show = view._show_progress
    view._show_progress = lambda percent: (show(percent), labels.append(view.load_button.label))
    view.network_text.value = "rand:n=4096,card=32"
    view.partition_select.value = "overlap"
    assert view.load() and not errors
    assert state.network.n_neurons == 4096
    assert labels and labels[-1] == "Partitioning 100%"
    assert all(re.fullmatch(r"Partitioning \d+%", label) for label in labels)
    assert view.load_button.label == "Load" and not view.load_button.disabled


def test_the_menus_never_name_what_is_not_loaded(controls, tmp_path):
    """Issue 40, item 7: after a mesh: spec the Hardware menu read 'hypergraph-large' (its
    first entry), after an upload the Network menu read 'conv-snn'. A menu shows what is
    loaded, or its entry for another (the spec field then says what it is)."""
    from explorer.views.controls import OTHER

    state, view, errors = controls
    state.load(NET, "mesh:6x6x2")
    assert view.hardware_select.value == "" and view.hardware_text.value == "mesh:6x6x2"
    assert view.hardware_select.options[OTHER] == ""
    state.load(NET, "loihi2")
    assert view.hardware_select.value == "loihi2"
    braille = (
        Path(__file__).parents[1] / "data" / "nir" / "paper_03_rnn_braille_noDelay_bias_zero.nir"
    )
    assert view.upload_file("braille.nir", braille.read_bytes()), errors
    assert view.network_select.value == "" and view.network_text.value == state.inputs.network_spec
    view.network_select.value = "linear-dense"
    view.network_select.value = ""  # choosing 'another' keeps what the spec field says
    assert view.network_text.value == "linear-dense"


def test_an_upload_says_what_it_changed_beside_the_mapping(tmp_path):
    """Issue 40, item 8: a mapping file for another network switched the page's network
    without a word, a file whose network name was edited was applied with no notice, and
    nir's failed type check went only to the server's log. Each is said (an information
    notification), and the upload still does what it did."""
    state = ExplorerState.from_specs(NET, "loihi2", partition_spec=None)
    said, errors = [], []
    view = ControlsView(state=state, notify=errors.append, inform=said.append)
    other = ExplorerState.from_specs("mlp:widths=32-64-8", "mesh:2x2x4")
    assert view.upload_file("theirs.json", other.mapping_json().encode()), errors
    theirs = other.network.name  # (the canonical spec)
    assert state.network.name == theirs
    assert said[-1].startswith(f"theirs.json is a mapping of {theirs} on mesh:2x2x4")
    mine = json.loads(state.mapping_json())
    mine["network"]["name"] = "sparse-mlp-2"  # edited by hand; the fingerprint is the same
    n = len(said)
    assert view.upload_file("edited.json", json.dumps(mine).encode()), errors
    assert state.network.name == theirs and len(said) == n + 1
    assert "names sparse-mlp-2 on mesh:2x2x4, but it is a mapping of" in said[-1]
    nir = Path(__file__).parents[1] / "data" / "nir" / "paper_01_lif_lif_rockpool.nir"
    assert view.upload_file("rock.nir", nir.read_bytes()), errors
    assert said[-1].startswith("rock.nir fails nir's own type check") and "/tmp" not in said[-1]
    assert not errors


def test_a_bad_load_or_upload_notifies_and_changes_nothing(controls):
    state, view, errors = controls
    before = (state.network, state.mapping, state.evaluation)
    view.network_text.value = "no-such-network"
    assert not view.load()
    assert "unknown network 'no-such-network'" in errors[-1]
    assert not view.upload_file("broken.json", b"{not json")
    assert "broken.json is not a JSON mapping file" in errors[-1]
    assert not view.upload_file("notes.txt", b"hello")
    assert (state.network, state.mapping, state.evaluation) == before
    assert not state.inputs.can_undo


def test_the_upload_widget_loads_a_saved_mapping(controls):
    state, view, errors = controls
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[2]))
    saved = view._mapping_file().read()
    assert json.loads(saved)["format"] == "meshscope-mapping"
    state.undo()
    view.upload.param.update(filename="tuned.json", value=saved.encode())  # what the page sends
    assert not errors
    np.testing.assert_array_equal(state.mapping.placement.cores[[0, 2]], c[[2, 0]])


def test_undo_redo_buttons_follow_the_history(controls):
    state, view, _ = controls
    assert view.undo_button.disabled and view.redo_button.disabled
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[1]))
    assert not view.undo_button.disabled and view.redo_button.disabled
    view.undo_button.clicks += 1
    assert view.undo_button.disabled and not view.redo_button.disabled
    view.redo_button.clicks += 1
    assert not view.undo_button.disabled


def test_reset_to_a_heuristic(controls):
    state, view, _ = controls
    view.reset_select.value = "spread-col"
    view.reset_button.clicks += 1
    assert state.inputs.can_undo
    routers = state.hardware.core_table["router"][state.mapping.placement.cores]
    assert len(set(routers)) == len(routers)  # spread: one partition per router


def _click(table, value: str) -> None:
    """What the browser sends when a click in the layer rows lands on a button of this
    ``value`` (``"k:-1"`` for layer k's −, ``"k:1"`` for its +)."""
    table._click(DOMEvent(None, node="layers", data={"type": "click", "target": {"value": value}}))


def test_layer_buttons_change_a_layers_cores(controls):
    state, view, errors = controls
    counts = list(state.mapping.partition.cores_per_population)
    table = view._layer_rows
    assert [row["count"] for row in table.rows] == counts
    assert [row["name"] for row in table.rows] == list(state.network.population_names)
    _click(table, "1:1")
    assert list(state.mapping.partition.cores_per_population) == [
        n + (k == 1) for k, n in enumerate(counts)
    ]
    assert table.rows[1]["count"] == counts[1] + 1
    _click(table, "1:-1")
    assert list(state.mapping.partition.cores_per_population) == counts
    assert not errors
    # a click beside the buttons, or a value no button has, changes nothing
    revision = state.shown.revision
    for value in ("", "1:2", f"{len(counts)}:1", "x:1"):
        _click(table, value)
    assert state.shown.revision == revision and not errors
    # the output layer has one core: its − is disabled, and the state refuses anyway
    out = len(counts) - 1
    assert table.rows[out]["fewer"] == (counts[out] > 1)
    assert not view.change_cores(out, -counts[out])
    assert "takes between 1 and" in errors[-1]


def test_a_spike_source_row_has_no_buttons_to_press():
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    rows = ControlsView(state=state)._layer_rows.rows
    source = [k for k, s in enumerate(state.network.spike_source) if s]
    assert source and all(not rows[k]["fewer"] and not rows[k]["more"] for k in source)
    assert "source" in rows[source[0]]["size"] and "input port" in rows[source[0]]["hint"]


def test_a_non_layered_partition_hides_the_layer_buttons(controls):
    state, view, _ = controls
    assert view._layer_rows.visible
    state.load(NET, "loihi2", partition_spec="overlap")
    assert state.mapping.partition.cores_per_population is None
    assert not view._layer_rows.visible
    assert "not a per-layer split" in view._layer_note.object


def test_run_action_reports_only_meshscope_errors():
    messages = []
    assert run_action(lambda: None, notify=messages.append)
    with pytest.raises(ZeroDivisionError):  # a bug stays a bug
        run_action(lambda: 1 / 0, notify=messages.append)
    assert messages == []
