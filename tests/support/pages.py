"""What several browser tests do on a page (beyond ``explorer.browser``, which the page
benchmarks share too)."""

from __future__ import annotations

from playwright.sync_api import expect

MOSAIC_TILES = """() => {
  const r = Bokeh.documents[0].get_model_by_name("mosaic-nt");
  return r ? r.data_source.get_length() : -1;
}"""  # the Mosaic tab's Neuron Tiles drawn (-1: no grid yet)


def tab(page, name: str):
    """A header of the page's Bokeh tabs (they carry no ARIA role)."""
    return page.locator(".bk-tab").filter(has_text=name).first


def visit_the_other_tabs(page) -> None:
    """Open the Mosaic tab until its tiles are drawn, then Pareto, Evolution, Bottlenecks,
    Compare and Mesh until each shows its first words."""
    tab(page, "Mosaic").click()
    expect(page.get_by_test_id("mosaic-summary")).to_be_visible(timeout=30_000)
    page.wait_for_function(f"() => ({MOSAIC_TILES})() > 0")
    for name, text in (("Pareto", "No search yet: choose"), ("Evolution", "No search yet"),
                       ("Bottlenecks", "heaviest links"), ("Compare", "Reference"),
                       ("Mesh", "Colour links by")):  # fmt: skip
        tab(page, name).click()
        expect(page.get_by_text(text).first).to_be_visible(timeout=30_000)
