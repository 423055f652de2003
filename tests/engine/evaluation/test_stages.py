"""The model read stage by stage (Loihi 2 mapping ES §5.6): each layer's incoming messages
alone on the mesh, the step the slowest stage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.evaluation.stages import stage_breakdown, stage_loads
from engine.pipeline import build_mapping, evaluate, evaluator


@pytest.fixture(scope="module", params=["packed-row", "spread-col", "random"])
def mapped(request):
    return build_mapping("sparse-mlp-1", "loihi2", partition="min+2", placement=request.param)


def test_the_stages_loads_sum_to_the_whole_steps(mapped):
    whole = evaluator(mapped).loads
    layers = np.unique(mapped.graph.population)
    total = sum(stage_loads(mapped, int(k)) for k in layers)
    assert np.array_equal(total, whole)


def test_stages_share_the_compute_terms_and_never_exceed_the_whole_link_term(mapped):
    ev = evaluate(mapped)
    st = stage_breakdown(mapped)
    assert len(st.rows) == mapped.network.n_populations - 1  # the input runs on no core
    for term in ("dendops", "synops", "synmem"):
        assert max(r["terms_us"][term] for r in st.rows) == pytest.approx(ev.terms_us[term])
    assert max(r["terms_us"]["link"] for r in st.rows) <= ev.terms_us["link"] + 1e-12
    assert st.latency_us <= ev.latency_us + 1e-12
    assert st.rows[0]["layer"] == "layer1" and st.rows[0]["terms_us"]["link"] > 0  # the port's
    slow = max(st.rows, key=lambda r: r["time_us"])
    assert st.slowest == slow["layer"] and st.latency_us == slow["time_us"]


def test_one_receiving_layer_is_the_whole_model():
    """A linear layer: all traffic goes into one layer, so both readings agree exactly."""
    m = build_mapping("linear-tiled-identity:M=8,N=256", "loihi2", placement="pairs-x")
    assert stage_breakdown(m).latency_us == pytest.approx(evaluate(m).latency_us, rel=1e-12)


def test_evaluate_stages_on_the_command_line(capsys):
    code = main(["evaluate", "--network", "mlp:widths=256-512-256-10", "--placement",
                 "spread-col", "--stages", "--json"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    stages = out["stages"]
    assert [r["layer"] for r in stages["rows"]] == ["layer1", "layer2", "layer3"]
    assert stages["latency_us"] <= out["latency_us"] + 1e-12
    code = main(["evaluate", "--network", "mlp:widths=256-512-256-10", "--stages"])
    text = capsys.readouterr().out
    assert "stage by stage" in text and "layer3" in text
