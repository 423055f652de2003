"""explorer.notebook without a browser: the page of ``meshscope serve`` on a notebook's
``Mapped``, read back after an edit, and a mapping pushed to it."""

from __future__ import annotations

import numpy as np
import panel as pn
import pytest
from bokeh.models import Plot

import engine
import explorer
from engine.errors import SpecError
from explorer.app import tabs


def mesh_figures(viewable) -> list:
    """The figures of ``viewable`` that draw cores (the mesh)."""
    return [
        p for p in viewable.get_root().select({"type": Plot})
        if any(r.name == "cores" for r in p.renderers)
    ]  # fmt: skip


@pytest.fixture
def mapped():
    net = engine.network_from_arrays(
        [engine.Population("in", 64, rate=0.4, spike_source=True),
         engine.Population("a", 96, rate=0.3), engine.Population("b", 32, rate=0.2)],
        [("in", "a", np.ones((64, 96))), ("a", "b", np.ones((96, 32)))],
        name="nb-net",
    )  # fmt: skip
    hw = engine.make_hardware("mesh:3x3", neurons_per_core=32)
    return engine.build_mapping(net, hw, partition="min", placement="packed-row")


def test_show_is_the_served_page_on_the_notebooks_objects(mapped):
    view = explorer.show(mapped)
    assert isinstance(view, explorer.Explorer)
    page = view.__panel__()
    assert page is view.__panel__()  # one page per Explorer
    page_tabs = next(iter(page.select(pn.Tabs)))
    assert page_tabs._names == [title for title, _ in tabs(view.state)]  # the served page's
    assert len(mesh_figures(page)) == 1
    assert view.state.network is mapped.network and view.state.hardware is mapped.hardware
    assert (view.mapping.placement.cores == mapped.mapping.placement.cores).all()
    assert view.evaluation.latency_us == pytest.approx(engine.evaluate(mapped).latency_us)


def test_an_edit_on_the_page_is_what_python_reads(mapped):
    view = explorer.show(mapped)
    a, b = (int(c) for c in mapped.mapping.placement.cores[[0, -1]])
    view.state.swap_cores(a, b)  # what a drop on the mesh calls
    now = view.mapped
    assert now.mapping.placement.cores[0] == b and now.mapping.placement.cores[-1] == a
    assert (mapped.mapping.placement.cores[[0, -1]] == [a, b]).all()  # the given one is kept
    assert view.evaluation.latency_us == pytest.approx(engine.evaluate(now).latency_us)


def test_a_pushed_mapping_is_shown_and_can_be_undone(mapped):
    view = explorer.show(mapped)
    a, b = (int(c) for c in mapped.mapping.placement.cores[[0, 1]])
    tuned = engine.swap_cores(mapped, a, b)
    view.push(tuned)
    assert (view.mapping.placement.cores == tuned.mapping.placement.cores).all()
    assert view.state.inputs.can_undo
    view.state.undo()
    assert (view.mapping.placement.cores == mapped.mapping.placement.cores).all()
    other = engine.build_mapping("mlp:widths=16-8", mapped.hardware, partition="min")
    view.push(other)  # another network: a new start
    assert view.state.network is other.network and view.mapping.partition.n_parts == 1


def test_show_refuses_what_is_not_a_mapping():
    with pytest.raises(SpecError, match="engine.build_mapping"):
        explorer.show("sparse-mlp-1")


def test_the_small_views(mapped):
    assert len(mesh_figures(explorer.show_mesh(mapped))) == 1
    curve = engine.sweep_pattern("uniform", [0.05, 0.3], width=3, height=3, cycles=400, warmup=100)
    figure = explorer.show_sweep(curve)
    html = figure[1].object
    assert "Zero-load latency" in html and f"{curve.zero_load_latency:,.1f}" in html


def test_the_subtitle_says_how_the_notebook_built_the_mapping(mapped, tmp_path):
    from explorer.app import _subtitle

    assert mapped.recipe == {"partition": "min", "placement": "packed-row"}
    assert "min partition, started from <b>packed-row</b>" in _subtitle(explorer.show(mapped).state)
    spread = engine.build_mapping(mapped.network, mapped.hardware, placement="random", seed=1)
    assert "default partition, started from <b>random</b>" in _subtitle(explorer.show(spread).state)
    path = tmp_path / "m.json"
    engine.write_mapping_file(str(path), spread)
    read = engine.build_mapping(mapped.network, mapped.hardware, mapping_file=str(path))
    assert f"from mapping file <b>{path}</b>" in _subtitle(explorer.show(read).state)
