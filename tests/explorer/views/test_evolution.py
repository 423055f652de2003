"""The evolution view without a browser: its columns, the row streamer, its reaction to a search."""

from __future__ import annotations

import math
import weakref
from types import SimpleNamespace

import numpy as np
import pytest
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from panel.io.state import set_curdoc

from engine.errors import MeshScopeError
from engine.search import ESConfig, Record
from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from explorer.views._page import session_scheduler
from explorer.views.evolution import EvolutionView, point_columns, trace_columns
from explorer.views.search_plots import RowStreamer

NET = "mlp:widths=256-512-256-10"


@pytest.fixture
def state():
    return ExplorerState.from_specs(NET, "loihi2")


# ------------------------------------------------------------------ columns
def test_trace_columns_turn_rows_into_arrays_and_gaps():
    cols = trace_columns([(1, 5.0), (2, 4.5), (3, math.inf)])
    assert cols["evaluations"].tolist() == [1, 2, 3]
    assert cols["best"][:2].tolist() == [5.0, 4.5]
    assert np.isnan(cols["best"][2])  # every evaluation failed so far: a gap, not Infinity
    empty = trace_columns([])
    assert empty["evaluations"].size == empty["best"].size == 0


def record(latency_us, energy_uj, cores) -> Record:
    return Record(
        index=0, generation=0, level="init", latency_us=latency_us, energy_uj=energy_uj,
        power_w=energy_uj / latency_us, cores_used=cores, accepted=False, failed=False,
        fitness=latency_us, cores_per_population=(cores,), placement=tuple(range(cores)),
    )  # fmt: skip


def test_point_columns_keep_latency_energy_and_cores():
    rows = [record(2.0, 0.8, 12), record(3.5, 1.25, 14)]
    cols = point_columns(rows)
    assert cols["latency_us"].tolist() == [2.0, 3.5]
    assert cols["energy_uj"].tolist() == [0.8, 1.25]
    assert cols["cores"].tolist() == [12, 14]
    assert cols["cores"].dtype.kind == "i"
    assert point_columns([])["latency_us"].size == 0


# ------------------------------------------------------------------ streaming
class RecordingSource:
    """Stands in for a ColumnDataSource and records how it was changed."""

    def __init__(self):
        self.data: dict = {}
        self.streamed: list[int] = []

    def stream(self, new_data):
        self.streamed.append(len(next(iter(new_data.values()))))
        self.data = {k: np.concatenate([self.data[k], v]) for k, v in new_data.items()}


def test_streamer_sends_only_new_rows_and_restarts_on_a_new_list():
    source = RecordingSource()
    streamer = RowStreamer(source, trace_columns)
    rows = [(1, 3.0), (2, 2.0)]
    assert len(streamer.update(rows)) == 2 and streamer.replaced  # first rows: replace
    rows = rows + [(3, 2.0), (4, 1.0)]  # grown by concatenation, as the runner publishes
    sent = streamer.update(rows)
    assert sent == rows[2:] and not streamer.replaced
    assert source.streamed == [2]
    assert streamer.update(rows) == [] and source.streamed == [2]  # nothing new, nothing sent
    assert source.data["evaluations"].tolist() == [1, 2, 3, 4]

    new_run = [(1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 5.0)]  # longer, but another run
    streamer.update(new_run)
    assert streamer.replaced and source.streamed == [2]
    assert source.data["best"].tolist() == [9.0, 8.0, 7.0, 6.0, 5.0]
    streamer.update([])
    assert streamer.replaced and len(source.data["best"]) == 0


def test_scheduler_without_a_document_calls_at_once():
    calls = []
    session_scheduler(None)(lambda: calls.append(1))
    assert calls == [1]


def test_scheduler_puts_the_call_on_the_document():
    class Doc:
        def __init__(self):
            self.callbacks = []

        def add_next_tick_callback(self, fn):
            self.callbacks.append(fn)

    doc = Doc()
    calls = []
    session_scheduler(doc)(lambda: calls.append(1))
    assert calls == [] and len(doc.callbacks) == 1
    doc.callbacks[0]()
    assert calls == [1]


def test_scheduler_hands_worker_calls_to_the_loop_thread_in_order():
    """The scheduler adds the document's next-tick callbacks on the thread of its
    server's event loop, in the order the worker asked (adding them from the worker raced
    with Panel's holds: a sweep's points ran out of order and one vanished)."""
    import asyncio
    import threading
    import time
    from types import SimpleNamespace

    from tornado.ioloop import IOLoop

    added = []

    class Doc:
        def __init__(self, loop):
            app = SimpleNamespace(io_loop=loop)  # as a Bokeh server's session context
            self.session_context = SimpleNamespace(
                server_context=SimpleNamespace(application_context=app)
            )

        def add_next_tick_callback(self, fn):
            added.append((threading.current_thread().name, fn))

    made, done = threading.Event(), threading.Event()
    box = {}

    async def main():
        box["schedule"] = session_scheduler(Doc(IOLoop.current()))
        made.set()
        end = time.monotonic() + 10  # the loop thread ends even if the callbacks never come
        while len(added) < 200 and time.monotonic() < end:
            await asyncio.sleep(0.005)
        done.set()

    loop_thread = threading.Thread(target=lambda: asyncio.run(main()), name="the-loop")
    loop_thread.start()
    assert made.wait(10)
    calls = [lambda k=k: k for k in range(200)]
    worker = threading.Thread(target=lambda: [box["schedule"](c) for c in calls], name="w")
    worker.start()
    worker.join(10)
    assert done.wait(10)
    loop_thread.join(10)
    assert {name for name, _ in added} == {"the-loop"}
    assert [fn() for _, fn in added] == list(range(200))


# ------------------------------------------------------------------ the view
def test_defaults_and_buttons_before_a_search(state):
    view = EvolutionView(state=state)
    assert (view.budget, view.lambda_part, view.lambda_place, view.objective) == (
        125,
        4,
        4,
        "latency",
    )
    assert not view.start_button.disabled
    assert view.stop_button.disabled and view.adopt_button.disabled
    assert len(view.trace_source.data["evaluations"]) == 0
    assert view.current_source.data["latency_us"] == [state.evaluation.latency_us]
    view.__panel__()  # the layout builds


def test_a_search_fills_one_row_per_evaluation_and_marks_the_best(state):
    view = EvolutionView(state=state)
    runner = SearchRunner(state, interval_s=0.0)
    runner.start(ESConfig(budget=40, seed=3))
    runner.join(60)
    assert not state.search.running
    trace = view.trace_source.data
    assert list(trace["evaluations"]) == list(range(1, 41))
    assert list(trace["best"]) == [t[1] for t in state.search.trace]
    points = view.points_source.data
    assert len(points["latency_us"]) == len(state.search.points) == 40
    assert list(points["cores"]) == [p.cores_used for p in state.search.points]
    best = state.search.best
    assert view.best_source.data == {"latency_us": [best.latency_us], "energy_uj": [best.energy_uj]}
    assert view.best_source.data["latency_us"][0] == min(points["latency_us"])
    assert view.adopt_button.disabled is False and view.stop_button.disabled is True
    assert "done after 40" in view._status.object
    assert 'data-testid="search-status"' in view._status.object


def test_start_stop_adopt_through_the_view(state):
    view = EvolutionView(state=state, budget=20_000, seed=5)
    view.start()  # no document: the runner publishes from its thread, at most every 150 ms
    assert state.search.running and view.start_button.disabled and not view.stop_button.disabled
    with pytest.raises(MeshScopeError):
        state.load(NET, "loihi2")  # a running search keeps the session as it is
    view.stop()
    view.runner.join(60)
    assert not state.search.running
    assert state.search.status.startswith("stopped after")
    n = len(view.trace_source.data["evaluations"])
    assert 0 < n < 100_000 and n == len(state.search.trace)
    view.adopt()
    assert state.evaluation.latency_us == pytest.approx(state.search.best.latency_us)
    assert state.search.status.startswith("adopted the best")
    assert view.current_source.data["latency_us"] == [state.evaluation.latency_us]


def test_start_from_the_current_mapping_is_ticked_once_it_is_edited(state):
    view = EvolutionView(state=state, budget=8, seed=2)
    box = view._from_current
    assert not box.value  # nothing edited yet: the heuristics are the start
    cores = state.mapping.placement.cores
    empty = [c for c in range(state.hardware.n_cores) if c not in set(cores.tolist())]
    state.swap_cores(int(cores[0]), empty[40])  # moved onto an empty slot
    assert box.value  # an edited mapping is where a search should start
    view.start()
    view.runner.join(60)
    assert state.search.points[0].note == "start"
    assert state.search.points[0].latency_us == pytest.approx(state.evaluation.latency_us)
    box.value = False  # the person's choice stands from now on
    state.undo()
    state.swap_cores(int(cores[1]), empty[41])
    assert not box.value
    view.start()
    view.runner.join(60)
    assert all(r.note != "start" for r in state.search.points)


def test_a_second_run_starts_the_plots_again(state):
    view = EvolutionView(state=state, budget=30)
    view.start()
    view.runner.join(60)
    view.param.update(budget=12, objective="energy", seed=1)
    view.start()
    view.runner.join(60)
    assert list(view.trace_source.data["evaluations"]) == list(range(1, 13))
    assert len(view.points_source.data["energy_uj"]) == 12
    assert "energy" in view.trace_figure.yaxis[0].axis_label
    best = view.trace_source.data["best"][-1]
    assert best == pytest.approx(state.search.best.energy_uj)


def test_a_refused_start_is_a_notification(state, monkeypatch):
    errors = []
    monkeypatch.setattr("explorer.views.evolution.notify_error", errors.append)
    view = EvolutionView(state=state)
    state.search.running = True  # e.g. a search started from another view of this session
    view.start()
    assert errors and "already running" in errors[0]
    assert view.runner is None and state.search.trace == []


def test_adopt_without_a_result_is_a_notification(state, monkeypatch):
    errors = []
    monkeypatch.setattr("explorer.views.evolution.notify_error", errors.append)
    view = EvolutionView(state=state)
    before = state.mapping
    view.adopt()
    assert errors and "no search result" in errors[0]
    assert state.mapping is before


def test_a_failed_search_is_reported(state, monkeypatch):
    errors = []
    monkeypatch.setattr("explorer.views.evolution.notify_error", errors.append)
    EvolutionView(state=state)
    state.search.param.update(error="boom", status="boom")
    assert errors == ["The search failed: boom"]


def test_streamer_streams_into_a_bokeh_source():
    source = ColumnDataSource()
    streamer = RowStreamer(source, trace_columns)
    streamer.update([(1, 2.0)])
    streamer.update([(1, 2.0), (2, 1.5)])
    assert list(source.data["evaluations"]) == [1, 2]
    assert list(source.data["best"]) == [2.0, 1.5]


def test_closing_the_session_stops_the_search(state):
    class Context:  # stands in for Bokeh's SessionContext, with what Panel asks of it
        id = "test-session"
        request = SimpleNamespace(arguments={}, cookies={}, headers={})

    context = Context()
    doc = Document()
    doc._session_context = weakref.ref(context)
    with set_curdoc(doc):
        view = EvolutionView(state=state, budget=20_000)
    assert len(doc.session_destroyed_callbacks) == 1
    view.start()
    assert state.search.running
    for callback in doc.session_destroyed_callbacks:
        callback(context)
    view.runner.join(60)
    assert not view.runner.running
    assert state.search.status.startswith("stopped after")


def test_a_point_picked_on_the_plot_is_shown_on_the_mesh_until_adopted_or_dropped(state):
    from explorer.views.mesh import MeshView

    view = EvolutionView(state=state, budget=30, seed=4)
    mesh = MeshView(state=state)
    view.start()
    view.runner.join(60)
    points = state.search.points
    worst = max(range(len(points)), key=lambda i: points[i].latency_us)
    view.pick([worst])  # what a click on the point does
    record = points[worst]
    assert state.search.picked is record
    assert state.shown_evaluation is state.search.picked_evaluation
    assert state.shown_evaluation.latency_us == pytest.approx(record.latency_us)
    np.testing.assert_array_equal(
        state.shown_mapping().placement.cores, record.mapping(state.network).placement.cores
    )
    assert f"evaluation {record.index + 1}" in mesh._banner.object and mesh._unpick.visible
    mesh._unpick.clicks += 1  # Back to mine: the best is on offer again
    assert state.search.picked is None and state.shown_evaluation is state.search.best_evaluation
    view.pick([worst])
    view.adopt()
    assert state.evaluation.latency_us == pytest.approx(record.latency_us)
    assert state.search.picked is None and not mesh._search_row.visible
    assert state.search.status.startswith("adopted the picked mapping")
    view.pick([])  # a click on nothing
    assert state.search.picked is None
