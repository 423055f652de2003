"""The Pareto view in a real browser: Start fills the scatter and the front live, a row of
the front's table shows that mapping, Adopt makes it the current one."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from explorer.browser import served_view
from explorer.state import ExplorerState
from explorer.views.pareto import ParetoView

NET = "mlp:widths=256-512-256-10"

LENGTH = """(name) => {
  if (!window.Bokeh || !Bokeh.documents || !Bokeh.documents.length) return null;
  const s = Bokeh.documents[0].get_model_by_name(name);
  return s ? s.get_length() : null;
}"""


@pytest.fixture(scope="module")
def pareto_url():

    def app():
        return ParetoView(state=ExplorerState.from_specs(NET, "mesh:2x2x4"), budget=120)

    ExplorerState.from_specs(NET, "mesh:2x2x4")  # warm the caches before the first visitor
    with served_view("pareto", app, "MeshScope Pareto") as url:
        yield url


@pytest.mark.ui
def test_a_search_draws_the_front_and_a_row_picks_its_mapping(open_page, pareto_url):
    page = open_page(pareto_url)
    status = page.get_by_test_id("pareto-status")
    expect(status).to_contain_text("No search yet")
    assert page.evaluate(LENGTH, "pareto-points") == 0
    page.get_by_role("button", name="Start").click()
    expect(status).to_contain_text("done after 120 evaluations", timeout=90_000)
    points = page.evaluate(LENGTH, "pareto-points")
    front = page.evaluate(LENGTH, "pareto-front")
    on_front = int(re.search(r"(\d+) mappings? on the front", status.text_content()).group(1))
    assert 0 < front == on_front <= points <= 120
    rows = page.locator(".tabulator-row")
    expect(rows).to_have_count(front)
    rows.first.click()
    expect(status).to_contain_text("is on the Mesh tab")
    adopt = page.get_by_role("button", name="Adopt")
    expect(adopt).to_be_enabled()
    adopt.click()
    expect(status).to_contain_text("adopted the picked mapping")


@pytest.mark.ui
def test_a_front_of_one_is_said_in_the_singular(open_page, pareto_url):
    """Issue 40, item 11: "1 mappings on the front". One evaluation of three objectives
    makes a front of exactly that one mapping (nothing else to dominate it)."""
    page = open_page(pareto_url)
    status = page.get_by_test_id("pareto-status")
    page.get_by_label("budget (evaluations)").fill("1")
    page.get_by_role("button", name="Start").click()
    expect(status).to_contain_text("done after 1 evaluation: 1 mapping on the front",
                                   timeout=90_000)  # fmt: skip
    assert page.evaluate(LENGTH, "pareto-front") == 1
