"""The page ``meshscope serve`` opens, in a real browser: title, metric cards, the mesh."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from engine.evaluation.cost import model_evaluation
from engine.hardware import load_hardware
from engine.mapping.assignment import Mapping
from engine.mapping.partition import make_partition
from engine.mapping.partition_graph import partition_graph
from engine.mapping.placement import make_placement
from engine.specs import load_network_spec
from explorer.browser import DEMO, FIGURE_DRAWN
from explorer.views.mesh_columns import IDLE_COLOR, LOAD_PALETTE, population_colors
from explorer.views.metrics import format_quantity


@pytest.fixture(scope="module")
def expected():
    """The default demo evaluated by the engine alone, as DESIGN.md's pipeline says."""
    network = load_network_spec(DEMO["network"])
    hardware = load_hardware(DEMO["hardware"])
    partition = make_partition(network, hardware, None)
    stats = partition_graph(network, hardware, partition)
    placement = make_placement(stats, hardware, "packed-row")
    return network, hardware, model_evaluation(network, hardware, Mapping(partition, placement))


def _rgb(hex_color: str) -> tuple[int, int, int]:
    return tuple(int(hex_color[i : i + 2], 16) for i in (1, 3, 5))


@pytest.mark.ui
def test_demo_page_shows_latency_and_draws_the_mesh(open_page, demo_url, expected):
    network, hardware, ev = expected
    page = open_page(demo_url)

    expect(page).to_have_title("MeshScope")

    latency = page.get_by_test_id("metric-latency-value")
    expect(latency).to_have_text(format_quantity(ev.latency_us))
    assert float(latency.text_content().replace(",", "")) == pytest.approx(ev.latency_us, rel=1e-3)
    expect(page.get_by_test_id("metric-energy-value")).to_have_text(format_quantity(ev.energy_uj))
    expect(page.get_by_test_id("metric-cores-value")).to_have_text(str(ev.cores_used))

    # Bokeh has drawn the figure, with one segment per existing link
    drawn = page.wait_for_function(FIGURE_DRAWN).json_value()
    assert drawn["links"] == np.count_nonzero(hardware.link_table["kind"] >= 0)
    assert drawn["cores"] == hardware.n_cores
    expect(page.locator("canvas").first).to_be_visible()

    # … and the canvas really shows cores and links: look at the frame's pixels
    frame = drawn["frame"]
    assert frame["width"] > 200 and frame["height"] > 400
    png = page.screenshot(clip=frame)
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).reshape(-1, 3)

    def count(hex_color: str) -> int:
        return int(np.all(pixels == _rgb(hex_color), axis=1).sum())

    first = int(network.core_populations[0])  # the first layer on cores (the input has none)
    first_color = population_colors(network.n_populations)[first]
    assert count(first_color) > 20, "the first layer's cores are not drawn"
    assert count(IDLE_COLOR) > 200, "the idle links are not drawn"
    assert count(LOAD_PALETTE[-1]) > 20, "the heaviest link is not in the scale's top colour"

    caption = page.get_by_test_id("mesh-caption")
    expect(caption).to_contain_text(f"{ev.link_messages[ev.bottleneck_link]:,.0f} messages / step")


@pytest.mark.ui
def test_the_layer_buttons_give_and_take_a_layers_cores(open_page, demo_url, expected):
    network, _, ev = expected
    page = open_page(demo_url)
    k = int(network.core_populations[0])  # the first layer on cores
    name = network.population_names[k]
    count = page.get_by_test_id(f"cores-{k}")
    before = int(count.text_content())
    used = page.get_by_test_id("metric-cores-value")
    expect(used).to_have_text(str(ev.cores_used))
    page.get_by_title(f"one core more for {name}").click()
    expect(count).to_have_text(str(before + 1))
    expect(used).to_have_text(str(ev.cores_used + 1))
    page.get_by_title(f"one core fewer for {name}").click()
    expect(count).to_have_text(str(before))
    expect(used).to_have_text(str(ev.cores_used))
    source = network.population_names[int(np.flatnonzero(network.spike_source)[0])]
    expect(page.get_by_title(f"one core more for {source}")).to_be_disabled()  # no cores
    expect(page.get_by_title(f"one core fewer for {source}")).to_be_disabled()
