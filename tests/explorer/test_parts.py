"""The session's parts (explorer/parts.py): one writer each, changed together."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.search import Record
from explorer.parts import Search, Simulation
from explorer.state import ExplorerState

EXPLORER = Path(__file__).resolve().parents[2] / "explorer"

# who may write each part: the part's own module always; besides, for inputs and shown, the
# session's actions (state.py)
WRITERS = {
    "inputs": {"state.py"},
    "shown": {"state.py"},
    "search": set(),  # only through its methods (parts.py)
    "simulation": set(),
}


def _writes(text: str, part: str) -> list[str]:
    """The lines of ``text`` that set a parameter of ``part`` directly."""
    direct = re.compile(
        rf"\.{part}\.(param\.update\(|param\.set_param\(|[a-z_]+\s*=[^=])"
    )  # fmt: skip
    return [line.strip() for line in text.splitlines() if direct.search(line)]


@pytest.mark.parametrize("part", list(WRITERS))
def test_each_part_is_written_by_its_owner_only(part):
    offenders = {}
    for path in sorted(EXPLORER.rglob("*.py")):
        rel = path.relative_to(EXPLORER).as_posix()
        if rel == "parts.py" or rel in WRITERS[part]:
            continue
        lines = _writes(path.read_text(), part)
        if lines:
            offenders[rel] = lines
    assert offenders == {}


def test_the_scan_finds_a_direct_write():
    assert _writes("        s.search.status = 'x'\n", "search")
    assert _writes("state.simulation.param.update(step=None)", "simulation")
    assert not _writes("if s.search.status == 'x':", "search")


@pytest.fixture
def state():
    return ExplorerState.from_specs("sparse-mlp-1", "loihi2")


def test_a_load_is_heard_when_every_part_has_changed(state):
    """A watcher of any part, during a load, reads the new network with the new mapping, no
    search result of the old one and no simulated step of it."""
    old_search = state.search
    state.search.param.update(best_on_mesh=True, best_evaluation=state.evaluation)
    state.simulation.param.update(step=object(), of=state.evaluation)
    seen = []

    def heard(*events):
        seen.append(
            (
                state.mapping.partition.assignment.size == state.network.n_neurons,
                state.hardware.name,
                state.mapping.placement.cores.max() < state.hardware.n_cores,
                state.shown_evaluation is state.evaluation,
                state.simulation.step,
            )
        )

    state.watch(heard, inputs=["network"], shown=["mapping"], search=["best_on_mesh"],
                simulation=["step"])  # fmt: skip
    state.load("mlp:widths=64-128-32-10", "mesh:4x4x2")
    assert old_search is state.search
    assert len(seen) == 4  # each part once, all after the whole change
    assert all(s == (True, "mesh:4x4x2", True, True, None) for s in seen)


def _record(index: int) -> Record:
    return Record(index, 0, "placement", 1.0, 2.0, 0.1, 4, True, False, 1.0, (4,), (0, 1, 2, 3))


def test_the_search_part_keeps_a_run_as_its_methods_say(state):
    search, best, evaluation = Search(), _record(1), state.evaluation
    search.begin("starting")
    assert search.running and search.best_on_mesh and search.status == "starting"
    search.publish([(1, 2.0)], [best], "1 / 5", best, evaluation)
    assert (search.trace, search.best, search.best_evaluation) == ([(1, 2.0)], best, evaluation)
    search.publish([(1, 2.0), (2, 2.0)], [best, _record(2)], "2 / 5")  # no new best
    assert search.best is best and search.status == "2 / 5" and len(search.points) == 2
    search.finish("done", "")
    assert not search.running and search.best_on_mesh
    search.pick(best, evaluation)
    assert search.picked is best and search.picked_evaluation is evaluation
    search.adopted()
    assert not search.best_on_mesh and search.picked is None
    search.clear()
    assert search.best is None and search.trace == [] and search.status == ""


def test_the_simulation_part_keeps_the_start_and_the_shown_step_apart(state):
    class Step:
        step_us = 3.5

    sim, start, shown = Simulation(), state.shown.start_evaluation, state.evaluation
    sim.begin()
    sim.publish(start, Step, start=True, shown=False)
    assert sim.start_us == 3.5 and sim.step is None and sim.running
    sim.publish(shown, Step, start=False, shown=True)
    assert sim.step is Step and sim.of is shown and not sim.running
    sim.failed(shown, "too long")
    assert sim.step is None and sim.error == "too long"
    sim.clear()
    assert sim.start_us is None and sim.of is None and sim.error == ""
