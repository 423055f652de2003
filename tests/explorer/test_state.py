"""ExplorerState: loads, switches mappings atomically, keeps its state on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from engine.cost import model_evaluation
from engine.errors import MeshScopeError, UnknownNameError
from engine.mapping import Mapping, Placement, mapping_to_dict
from explorer.access import ClientAccess
from explorer.state import ExplorerState, resolve


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
    state.param.watch(
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
    assert state.mapping_path == str(path)
    assert state.evaluation.latency_us == model_evaluation(net, hw, mapping).latency_us
