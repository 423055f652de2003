"""No text a client sends runs script in the page (issue 52, item 1), in a real browser.

Every vector carries ``<img src=/xss-probe-K onerror=…>``: markup parsed as HTML would ask
the server for ``/xss-probe-K`` (whatever the Content-Security-Policy then blocks) and,
without the policy, run its handler. A vector passes only if the page asked for no probe,
logged no policy violation, ran no handler — and showed the text as text where it says it
(a notification quotes it literally). Vectors: each field of a scene, in a link and in a
scene file; the network and hardware boxes; a mapping upload naming a network and a
hardware; an uploaded file's name; a network whose name and population names are markup,
then every tab; the Mosaic tab's boxes and the packet walk's boxes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from playwright.sync_api import expect

from engine.io.network_file import save_network
from engine.mapping.assignment import mapping_to_dict
from engine.model.network import Network
from engine.pipeline import build_mapping
from explorer.browser import CORE_XY, FIGURE_DRAWN, HOT_LINK_XY, WEBSOCKET_OPEN, open_in
from explorer.scenes import FORMAT, VERSION, Scene, encode_scene
from explorer.tabs import titles
from tests.support.pages import tab

pytestmark = pytest.mark.ui

PROBE = "/xss-probe-"


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1366, "height": 768}}


def payload(k: int, path: str = PROBE) -> str:
    return f'<img src={path}{k} onerror="window.__xss=(window.__xss||[]).concat({k})">'


TOAST_LOG = """
window.__toasts = [];
new MutationObserver((changes) => {
  for (const change of changes) for (const node of change.addedNodes) {
    if (node.nodeType !== 1) continue;
    const toasts = node.matches(".notyf__toast") ? [node] : node.querySelectorAll(".notyf__toast");
    for (const toast of toasts) setTimeout(() => window.__toasts.push(toast.textContent), 0);
  }
}).observe(document, {childList: true, subtree: true});
"""


class Watch:
    """What a page did with the payloads: probes it asked for, policy violations it
    logged, handlers it ran."""

    def __init__(self, page):
        self.page, self.probes, self.violations = page, [], []
        # every notification the page shows, kept after it fades (on a slow machine the first
        # can be gone before the second comes)
        page.add_init_script(TOAST_LOG)
        page.on("request", lambda r: PROBE in r.url and self.probes.append(r.url))
        page.on(
            "console",
            lambda m: "Content Security Policy" in m.text and self.violations.append(m.text),
        )

    def clean(self, where: str) -> None:
        ran = self.page.evaluate("window.__xss || []")
        assert not self.probes and not self.violations and not ran, (
            f"{where}: markup from a client was parsed: probes {self.probes}, "
            f"violations {self.violations[:2]}, handlers {ran}"
        )


def said(page, watch: Watch, k: int, where: str, count: int = 1, quoted: str = PROBE) -> None:
    """Wait for the ``count``-th notification of the page, check that nothing of it was
    parsed, then that it quotes payload ``k`` as text."""
    page.wait_for_function(f"window.__toasts.length >= {count}", timeout=30_000)
    watch.clean(where)
    texts = page.evaluate("window.__toasts")
    assert len(texts) == count, f"{where}: {len(texts)} notifications, not {count}: {texts}"
    assert any(f"{quoted}{k}" in t for t in texts), f"{where}: no notification quotes it: {texts}"


def open_live(page, url: str):
    """Go to ``url``; return once the session is live (a scene's page shows its Traffic tab,
    not the mesh ``open_in`` waits for)."""
    with page.expect_console_message(lambda m: WEBSOCKET_OPEN in m.text, timeout=30_000):
        page.goto(url)


def scene_dict(**fields) -> dict:
    base = {"format": FORMAT, "version": VERSION, "title": "t", "text": "x"}
    return {**base, **fields}


def link_of(data: dict) -> str:
    import base64

    raw = json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# each: a scene that a page refuses, naming the hostile text it holds
BAD_SCENES = {
    "routing": lambda k: scene_dict(routing=payload(k)),
    "pattern": lambda k: scene_dict(pattern=payload(k)),
    "kind": lambda k: scene_dict(kind=payload(k)),
    "a field's name": lambda k: scene_dict(**{payload(k): 1}),
    "mode": lambda k: scene_dict(
        kind="mapping", network="sparse-mlp-1", hardware="loihi2", mode=payload(k)
    ),  # fmt: skip
    "network": lambda k: scene_dict(kind="mapping", network=payload(k), hardware="loihi2"),
    "hardware": lambda k: scene_dict(kind="mapping", network="sparse-mlp-1", hardware=payload(k)),
    "partition": lambda k: scene_dict(
        kind="mapping", network="sparse-mlp-1", hardware="loihi2", partition=payload(k)
    ),  # fmt: skip
    "placer": lambda k: scene_dict(
        kind="mapping", network="sparse-mlp-1", hardware="loihi2", placer=payload(k)
    ),  # fmt: skip
    "compare": lambda k: scene_dict(
        kind="mapping", network="sparse-mlp-1", hardware="loihi2", compare=[payload(k)]
    ),  # fmt: skip
    "title of a scene that fails": lambda k: scene_dict(
        title=payload(k), kind="mapping", network="no-such-network", hardware="loihi2"
    ),
}


@pytest.mark.parametrize("field", ["routing", "a field's name", "title of a scene that fails"])
def test_a_scene_link_runs_no_script(page, demo_url, field):
    """One click on a link (the probe's own example: the routing field)."""
    watch = Watch(page)
    open_live(page, f"{demo_url}?scene={link_of(BAD_SCENES[field](1))}")
    said(page, watch, 1, f"a link's {field}")


def test_a_scene_whose_title_and_text_are_markup_shows_them_as_text(page, demo_url):
    scene = Scene(title=payload(1), text=payload(2), kind="synthetic", side=4)
    watch = Watch(page)
    open_live(page, f"{demo_url}?scene={encode_scene(scene)}")
    expect(page.get_by_text(f"{PROBE}2", exact=False).first).to_be_visible(timeout=30_000)
    watch.clean("a scene's title and text")


def _upload(page, locator, name: str, data: bytes) -> None:
    locator.set_input_files(files=[{"name": name, "mimeType": "application/json", "buffer": data}])


def test_scene_files_run_no_script_whichever_field_is_hostile(page, demo_url):
    watch = Watch(page)
    open_in(page, demo_url)
    tab(page, "Traffic").click()
    page.get_by_text("Share this setup, or open one").click()
    chooser = page.locator("input[type=file]").last
    for k, (field, make) in enumerate(BAD_SCENES.items(), start=10):
        _upload(page, chooser, f"scene-{k}.json", json.dumps(make(k)).encode())
        said(page, watch, k, f"a scene file's {field}", count=k - 9)


def test_boxes_uploads_and_file_names_run_no_script(page, demo_url):
    watch = Watch(page)
    open_in(page, demo_url)
    network_box = page.get_by_placeholder("e.g. qubo:n=2000")
    hardware_box = page.get_by_placeholder("e.g. mesh:8x8x2")
    load = page.get_by_role("button", name="Load", exact=True).first
    for k, box in ((20, network_box), (21, hardware_box)):
        box.fill(payload(k))
        box.press("Enter")
        load.click()
        said(page, watch, k, "a typed box", count=k - 19)
        box.fill("sparse-mlp-1" if k == 20 else "loihi2")
        box.press("Enter")
    chooser = page.locator("input[type=file]").first
    for k, named in ((22, "network"), (23, "hardware")):  # a mapping of another network
        mapping = mapping_to_dict(*demo_mapping())
        mapping[named] = {"name": payload(k), "fingerprint": "0" * 16}
        _upload(page, chooser, f"m{k}.json", json.dumps(mapping).encode())
        said(page, watch, k, f"a mapping file's {named} name", count=k - 19)
    # the file's own name (a name holds no "/": the probe's path is relative, the same URL)
    _upload(page, chooser, f"{payload(24, PROBE[1:])}.json", b"{not json")
    said(page, watch, 24, "an uploaded file's name", count=5, quoted=PROBE[1:])


def demo_mapping():
    mapped = build_mapping("sparse-mlp-1", "loihi2")
    return mapped.network, mapped.hardware, mapped.mapping


def hostile_network(k: int, folder) -> bytes:
    """An .npz network whose name and population names are markup."""
    rng = np.random.default_rng(0)
    n = 300
    counts = rng.integers(1, 6, size=n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    network = Network(
        name=payload(k), indptr=indptr, indices=rng.integers(0, n, size=int(indptr[-1])),
        population=np.repeat(np.arange(3), n // 3),
        population_names=[payload(k + 1), payload(k + 2), payload(k + 3)],
        rate=np.full(n, 0.2),
    )  # fmt: skip
    path = folder / "hostile.npz"
    save_network(network, path)
    return path.read_bytes()


def test_a_network_whose_names_are_markup_runs_no_script_on_any_tab(page, demo_url, tmp_path):
    watch = Watch(page)
    open_in(page, demo_url)
    chooser = page.locator("input[type=file]").first
    chooser.set_input_files(
        files=[{"name": "hostile.npz", "mimeType": "application/octet-stream",
                "buffer": hostile_network(30, tmp_path)}]
    )  # fmt: skip
    expect(page.get_by_test_id("subtitle")).to_contain_text(f"{PROBE}30", timeout=60_000)
    watch.clean("the header and the sidebar")
    for name in titles():  # every tab of the page
        tab(page, name).click()
        page.wait_for_timeout(1500)  # the tab's view built and drawn
        watch.clean(f"the {name} tab")
    tab(page, "Mesh").click()
    page.wait_for_function(FIGURE_DRAWN)
    page.locator(".lf-toggle").click()  # the layer filter lists the names as text
    expect(page.locator(".lf-name").filter(has_text=f"{PROBE}31")).to_be_visible()
    page.locator(".lf-item").nth(1).click()
    page.keyboard.press("Escape")
    watch.clean("the layer filter")
    cores = page.evaluate(CORE_XY, [0, 1, 2])
    for x, y in cores:  # the cores' tooltips
        page.mouse.move(x, y)
        page.wait_for_timeout(400)
    page.mouse.click(*cores[1])  # a core's inspection: its layer, its flows
    expect(page.get_by_test_id("inspect-header")).to_be_visible()
    page.mouse.click(*page.evaluate(HOT_LINK_XY))  # the heaviest link's flows
    expect(page.locator(".tabulator-row").first).to_be_visible()
    expect(page.locator(".tabulator-cell").filter(has_text=f"{PROBE}3").first).to_be_visible()
    watch.clean("a core's and a link's inspection, the tooltips")


def test_the_mosaic_and_walk_boxes_run_no_script(page, demo_url):
    watch = Watch(page)
    open_in(page, demo_url)
    tab(page, "Mosaic").click()
    page.locator(".bk-btn").filter(has_text="network spec").click()
    spec = page.get_by_placeholder("e.g. mlp:widths=256-256-10,density=0.05")
    spec.fill(payload(40))
    spec.press("Enter")
    expect(page.get_by_text(f"{PROBE}40").first).to_be_visible(timeout=30_000)
    watch.clean("the Mosaic tab's network spec")
    tab(page, "Traffic").click()
    page.get_by_role("button", name="Simulate").click()
    walk = page.get_by_role("button", name="Walk", exact=True)
    expect(walk).to_be_enabled(timeout=60_000)
    source = page.get_by_placeholder("(x,y) or (x,y):s").first
    source.fill(payload(41))
    source.press("Enter")
    walk.click()
    said(page, watch, 41, "the walk's boxes", count=2)
