"""ExplorerState without a browser: it loads, switches mappings atomically, keeps its state on
bad input, and every explorer action on it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np
import pytest

from engine.errors import CapacityError, InputFileError, MeshScopeError, SpecError, UnknownNameError
from engine.evaluation.cost import model_evaluation
from engine.io.network_file import save_network
from engine.mapping.assignment import Mapping, Placement, mapping_to_dict
from engine.search import ESConfig
from engine.specs import load_network_spec
from explorer.access import ClientAccess
from explorer.runner import SearchRunner
from explorer.state import ActionError, ExplorerState, resolve


@pytest.mark.parametrize("module", ["explorer.state", "explorer.views.mesh_columns"])
def test_module_imports_no_ui_toolkit(module):
    code = (
        f"import sys, {module}; "
        "bad = [m for m in ('panel', 'bokeh', 'holoviews') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_load_matches_the_engine(demo_state):
    ev = model_evaluation(demo_state.network, demo_state.hardware, demo_state.mapping)
    assert demo_state.evaluation.latency_us == ev.latency_us
    assert demo_state.evaluation.energy_uj == ev.energy_uj
    assert demo_state.network.name.startswith("sparse-mlp-1")
    assert demo_state.hardware.name == "loihi2"
    assert demo_state.loaded


def test_bad_input_raises_and_keeps_the_previous_state(demo_state):
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    before = (state.network, state.hardware, state.mapping, state.evaluation)
    with pytest.raises(UnknownNameError):
        state.load("no-such-network", "loihi2")
    with pytest.raises(MeshScopeError):
        state.load("sparse-mlp-1", "mesh:banana")
    too_few = Placement(state.mapping.placement.cores[:-1])
    with pytest.raises(MeshScopeError):
        state.set_mapping(Mapping(state.mapping.partition, too_few))
    assert (state.network, state.hardware, state.mapping, state.evaluation) == before


def test_set_mapping_updates_mapping_and_evaluation_together(demo_state):
    state = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    seen = []
    state.shown.param.watch(
        lambda *events: seen.append(sorted(e.name for e in events)), ["mapping", "evaluation"]
    )
    cores = state.mapping.placement.cores.copy()
    cores[[0, 1]] = cores[[1, 0]]
    new = Mapping(state.mapping.partition, Placement(cores))
    state.set_mapping(new)
    assert state.mapping is new
    want = model_evaluation(state.network, state.hardware, new)
    assert state.evaluation.latency_us == want.latency_us
    assert seen == [["evaluation", "mapping"]]  # one batch: never a mapping without its evaluation


def test_resolve_is_cached_and_read_only():
    a = resolve("sparse-mlp-1", "loihi2")
    b = resolve("sparse-mlp-1", "loihi2")
    assert a[2] is b[2]
    with pytest.raises(ValueError):
        a[2].placement.cores[0] = 5  # shared between sessions: nobody edits it in place


def test_load_a_mapping_file(tmp_path, demo_state):
    net, hw = demo_state.network, demo_state.hardware
    cores = demo_state.mapping.placement.cores[::-1].copy()
    mapping = Mapping(demo_state.mapping.partition, Placement(cores))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(mapping_to_dict(net, hw, mapping)))
    # the Python API's user may open any file; a server's client may not (test_access)
    state = ExplorerState.from_specs(None, None, str(path), access=ClientAccess.local())
    np.testing.assert_array_equal(state.mapping.placement.cores, cores)
    assert state.inputs.mapping_path == str(path)
    assert state.evaluation.latency_us == model_evaluation(net, hw, mapping).latency_us


NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    s = ExplorerState()
    s.load(NET, "loihi2", partition_spec="min+2")  # 12 cores
    return s


def fresh_latency(s: ExplorerState) -> float:
    return model_evaluation(s.network, s.hardware, s.mapping).latency_us


def snapshot(s):
    return (s.mapping, s.evaluation, s.inputs.can_undo, s.inputs.can_redo, s.network, s.hardware)


def test_swap_two_occupied_cores_exchanges_them_and_reevaluates(state):
    cores = state.mapping.placement.cores.copy()
    a, b = int(cores[0]), int(cores[-1])
    state.swap_cores(a, b)
    after = state.mapping.placement.cores
    assert after[0] == b and after[-1] == a
    assert np.array_equal(
        np.delete(after, [0, cores.size - 1]), np.delete(cores, [0, cores.size - 1])
    )
    assert state.evaluation.latency_us == fresh_latency(state)
    assert state.inputs.can_undo and not state.inputs.can_redo


def test_move_to_an_empty_core(state):
    cores = state.mapping.placement.cores
    empty = int(np.setdiff1d(np.arange(state.hardware.n_cores), cores)[-1])
    state.swap_cores(int(cores[2]), empty)
    assert state.mapping.placement.cores[2] == empty
    assert state.evaluation.cores_used == cores.size
    assert state.evaluation.latency_us == fresh_latency(state)


def test_undo_and_redo_walk_the_history(state):
    m0 = state.mapping
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[1]))
    m1 = state.mapping
    state.change_layer_cores(1, +1)
    m2 = state.mapping
    state.undo()
    assert state.mapping is m1 and state.inputs.can_redo
    state.undo()
    assert state.mapping is m0 and not state.inputs.can_undo
    state.undo()  # nothing left: no change
    assert state.mapping is m0
    state.redo()
    state.redo()
    assert state.mapping is m2 and not state.inputs.can_redo
    assert state.evaluation.latency_us == fresh_latency(state)
    # a new action after an undo drops the redo branch
    state.undo()
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[2]))
    assert not state.inputs.can_redo


def test_change_layer_cores_keeps_each_layers_physical_cores(state):
    part = state.mapping.partition
    before = np.asarray(part.cores_per_population)
    cores = state.mapping.placement.cores
    offsets = np.concatenate([[0], np.cumsum(before)])
    state.change_layer_cores(2, +2)
    after = np.asarray(state.mapping.partition.cores_per_population)
    assert after.tolist() == (before + np.eye(before.size, dtype=int)[2] * 2).tolist()
    new = state.mapping.placement.cores
    new_off = np.concatenate([[0], np.cumsum(after)])
    for k in range(before.size):
        old_k = cores[offsets[k] : offsets[k + 1]]
        new_k = new[new_off[k] : new_off[k + 1]]
        assert np.array_equal(new_k[: old_k.size], old_k), f"layer {k} lost its cores"
    assert not np.isin(new[new_off[2] + before[2] : new_off[3]], cores).any()
    state.change_layer_cores(2, -2)
    shrunk = state.mapping.placement.cores
    s_off = np.concatenate([[0], np.cumsum(state.mapping.partition.cores_per_population)])
    assert np.array_equal(
        shrunk[s_off[2] : s_off[3]], new[new_off[2] : new_off[2] + s_off[3] - s_off[2]]
    )
    assert state.evaluation.latency_us == fresh_latency(state)


def test_infeasible_edits_raise_and_change_nothing(state):
    before = snapshot(state)
    with pytest.raises(CapacityError, match="between 1 and"):
        state.change_layer_cores(1, -100)
    with pytest.raises(CapacityError, match="input is a spike source: it runs on no core"):
        state.change_layer_cores(0, +1)
    with pytest.raises(ActionError, match="nothing to move"):
        empty = np.setdiff1d(np.arange(state.hardware.n_cores), state.mapping.placement.cores)
        state.swap_cores(int(empty[0]), int(empty[1]))
    with pytest.raises(SpecError, match="cores must lie in"):
        state.swap_cores(0, 10_000)
    # removing cores until a layer breaks its memory limit
    big = ExplorerState.from_specs("sparse-mlp-1", "loihi2")
    b_before = snapshot(big)
    with pytest.raises(CapacityError, match="core memory"):
        big.change_layer_cores(3, -1)  # layer3 at its minimum
    assert snapshot(big) == b_before
    assert snapshot(state) == before


def test_reset_to_a_heuristic_is_undoable(state):
    state.reset("spread-col")
    assert state.evaluation.latency_us == fresh_latency(state)
    order = state.mapping.placement.cores
    assert len(set(state.hardware.core_table["router"][order[:8]])) == 8  # one core per router
    state.undo()
    assert state.evaluation.latency_us == state.shown.start_evaluation.latency_us
    assert state.change_pct() == 0.0


def test_save_and_upload_a_mapping_round_trip(state):
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[5]))
    saved = state.mapping_json()
    other = ExplorerState()
    other.load(NET, "loihi2", partition_spec="min+2")
    assert other.upload("tuned.json", saved.encode()) == "mapping"
    assert np.array_equal(other.mapping.placement.cores, state.mapping.placement.cores)
    assert other.evaluation.latency_us == state.evaluation.latency_us
    assert other.inputs.can_undo  # same network: an undoable edit


def test_upload_a_mapping_of_another_network_switches_to_it(state):
    other = ExplorerState.from_specs("conv-snn", "loihi2")
    data = other.mapping_json().encode()
    state.upload("conv.json", data)
    assert state.network.name == "conv-snn:size=16"
    assert state.evaluation.latency_us == other.evaluation.latency_us


def test_upload_a_network_file(state, tmp_path):
    path = tmp_path / "q.npz"
    save_network(load_network_spec("qubo:n=300"), path)
    assert state.upload("q.npz", path.read_bytes()) == "network"
    assert state.network.name.startswith("qubo")
    assert state.evaluation.latency_us == fresh_latency(state)


@pytest.mark.parametrize(
    "name,data,message",
    [
        ("m.json", b"{not json", "not a JSON mapping file"),
        ("m.json", json.dumps({"format": "other"}).encode(), "not a MeshScope mapping"),
        ("n.npz", b"garbage", "not a MeshScope network file"),
        ("x.txt", b"hello", "reads mapping files"),
    ],
)
def test_bad_uploads_raise_and_keep_the_mapping(state, name, data, message):
    before = snapshot(state)
    with pytest.raises(InputFileError, match=message):
        state.upload(name, data)
    assert snapshot(state) == before


def test_mapping_for_the_wrong_hardware_is_refused(state):
    doc = mapping_to_dict(state.network, state.hardware, state.mapping)
    doc["placement"][0] = [0, 99, 0, 0]
    before = snapshot(state)
    with pytest.raises(InputFileError, match="does not exist"):
        state.upload("bad.json", json.dumps(doc).encode())
    assert snapshot(state) == before


def test_reference_comparison(state):
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[7]))
    state.set_reference("start")
    assert state.shown.reference_evaluation.latency_us == state.shown.start_evaluation.latency_us
    other = ExplorerState.from_specs(NET, "loihi2", placer="spread-row")
    state.set_reference("file", filename="spread.json", data=other.mapping_json().encode())
    assert state.shown.reference_label == "spread.json"
    assert state.shown.reference_evaluation.latency_us == other.evaluation.latency_us
    with pytest.raises(MeshScopeError, match="no search result"):
        state.set_reference("best")


def test_snapshot_and_restore_survive_a_new_session(state):
    c = state.mapping.placement.cores
    state.swap_cores(int(c[1]), int(c[4]))
    snap = json.loads(json.dumps(state.snapshot()))
    again = ExplorerState()
    again.restore(snap)
    assert np.array_equal(again.mapping.placement.cores, state.mapping.placement.cores)
    assert again.evaluation.latency_us == state.evaluation.latency_us


def test_two_states_never_share_edits():
    a = ExplorerState.from_specs(NET, "loihi2")
    b = ExplorerState.from_specs(NET, "loihi2")
    c = a.mapping.placement.cores
    a.swap_cores(int(c[0]), int(c[1]))
    assert not np.array_equal(a.mapping.placement.cores, b.mapping.placement.cores)
    assert b.evaluation.latency_us == b.shown.start_evaluation.latency_us
    with pytest.raises(ValueError):  # shared cached arrays are read-only
        b.mapping.placement.cores[0] = 5


# ------------------------------------------------------------------ search
def test_search_runs_publishes_and_adopts(state):
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=30, seed=1))
    assert state.search.running
    runner.join(30)
    assert not state.search.running and "done after 30" in state.search.status
    assert [t[0] for t in state.search.trace] == list(range(1, 31))
    best = [t[1] for t in state.search.trace]
    assert all(x >= y for x, y in zip(best, best[1:], strict=False))
    assert len(state.search.points) == 30
    assert state.search.best_evaluation.latency_us == pytest.approx(state.search.best.latency_us)
    state.adopt_best()
    assert state.evaluation.latency_us == pytest.approx(state.search.best.latency_us)
    assert state.inputs.can_undo
    state.set_reference("best")
    assert state.shown.reference_label == "best of the search"


def test_stop_keeps_the_best_and_ends_the_run(state):
    started = threading.Event()
    runner = SearchRunner(state, interval_s=0.0)

    def schedule(fn):
        fn()
        if state.search.trace and len(state.search.trace) >= 10:
            started.set()

    runner.schedule = schedule
    runner.start(ESConfig(budget=20_000, seed=2))
    assert started.wait(30)
    runner.stop()
    runner.join(30)
    assert not runner.running and not state.search.running
    assert state.search.status.startswith("stopped after")
    n = len(state.search.trace)
    assert 10 <= n < 100_000
    assert state.search.best.fitness == min(t[1] for t in state.search.trace)


def test_loading_is_refused_while_a_search_runs(state):
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=20_000, seed=3))
    try:
        with pytest.raises(MeshScopeError, match="search is running"):
            state.load("conv-snn", "loihi2")
        with pytest.raises(MeshScopeError, match="already running"):
            runner.start(ESConfig(budget=10))
    finally:
        runner.stop()
        runner.join(30)


def test_the_best_is_shown_from_the_search_start_until_it_is_adopted(state):
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))
    mine = state.evaluation
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=12, seed=1))
    runner.join(60)
    assert not state.search.running and state.search.best_on_mesh
    best = state.search.best_evaluation
    assert state.shown_evaluation is best and state.evaluation is mine  # after the run too
    state.search.follow_best = False
    assert state.shown_evaluation is mine
    state.search.follow_best = True
    state.adopt_best()
    assert not state.search.best_on_mesh and state.shown_evaluation is state.evaluation
    assert state.evaluation.latency_us == pytest.approx(best.latency_us)
    state.undo()
    assert state.shown_evaluation is state.evaluation
    assert state.evaluation.latency_us == pytest.approx(mine.latency_us)


def test_a_new_network_ends_the_offer_of_the_best(state):
    state.search.param.update(best_on_mesh=True, best_evaluation=state.shown.start_evaluation)
    state.load("linear-dense:M=4,N=64", "loihi2")
    assert not state.search.best_on_mesh and state.shown_evaluation is state.evaluation


def test_a_search_can_start_from_the_edited_mapping(state):
    assert not state.edited
    cores = state.mapping.placement.cores
    state.swap_cores(int(cores[0]), int(cores[8]))
    assert state.edited
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=8, seed=2), from_current=True)
    runner.join(60)
    first = state.search.points[0]
    assert first.note == "start" and first.latency_us == pytest.approx(state.evaluation.latency_us)
    assert "from the current mapping" not in state.search.status  # the end says how it went
    assert state.search.best.latency_us <= state.evaluation.latency_us + 1e-9
    assert isinstance(state.mapping, Mapping)


def test_the_status_says_where_the_search_started_and_what_it_measured(state):
    """The end says the best as the search measured it and the search's own start — the
    hand-tuned mapping it started from, not the mapping the session loaded."""
    cores = state.mapping.placement.cores
    for k in range(1, 6):  # a hand-tuned mapping
        state.swap_cores(int(cores[0]), int(cores[k]))
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=8, seed=2), from_current=True)
    runner.join(60)
    start = state.search.points[0]
    assert start.note == "start"
    initial = min((r for r in state.search.points if r.generation == 0), key=lambda r: r.fitness)
    said = "your mapping" if initial.note == "start" else initial.note
    assert f"from {initial.latency_us:.3f} µs ({said})" in state.search.status
    assert f"best {state.search.best.latency_us:.3f} µs" in state.search.status


def test_a_simulated_search_reports_the_simulated_step_as_its_result(state):
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=6, seed=1, objective="simulated-latency"))
    runner.join(120)
    best = state.search.best
    assert f"best {best.simulated_us:.3f} µs simulated" in state.search.status
    assert f"(the model's {best.latency_us:.3f} µs)" in state.search.status


def test_undo_after_loading_another_network_brings_back_the_users_mapping(state):
    """Issue 40, item 2: a load (another network, hardware, or a scene's mapping) threw the
    user's hand-tuned mapping away with the history. Undo brings back the network, hardware,
    the tuned mapping and its start (the change in %), and the edits below it; Redo the load."""
    network, start = state.network, state.mapping
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[-1]))
    tuned, tuned_latency = state.mapping, state.evaluation.latency_us
    state.load("mlp:widths=64-128-32-10", "mesh:4x4x2")
    loaded = state.network
    assert state.inputs.can_undo and not state.inputs.can_redo and not state.edited
    state.undo()
    assert state.network is network and state.hardware.name == "loihi2"
    assert state.mapping is tuned and state.evaluation.latency_us == tuned_latency
    assert state.start_mapping is start and state.edited and state.inputs.network_spec == NET
    assert state.inputs.can_undo and state.inputs.can_redo
    state.undo()  # the edit before the load
    assert state.mapping is start and not state.inputs.can_undo
    state.redo()
    state.redo()  # the load again
    assert state.network is loaded and state.hardware.name != "loihi2"
    assert not state.inputs.can_redo and state.inputs.can_undo
    assert state.evaluation.latency_us == fresh_latency(state)


def test_a_new_edit_after_undoing_a_load_drops_the_load_from_redo(state):
    state.load("mlp:widths=64-128-32-10", "mesh:4x4x2")
    state.undo()
    c = state.mapping.placement.cores
    state.swap_cores(int(c[0]), int(c[1]))
    assert not state.inputs.can_redo and state.inputs.network_spec == NET


def test_only_the_last_loads_are_kept_for_undo(state):
    """Each load keeps what it replaced (a network and its evaluator) for Undo, up to
    LOADS_KEPT of them: older ones, and the edits below them, are let go."""
    from explorer.state import LOADS_KEPT

    for widths in ("64-10", "64-32-10", "64-48-10", "64-16-10", "32-10")[: LOADS_KEPT + 1]:
        state.load(f"mlp:widths={widths}", "mesh:4x4x2")
    seen = []
    while state.inputs.can_undo:
        state.undo()
        seen.append(state.inputs.network_spec)
    assert len(seen) == LOADS_KEPT and NET not in seen
