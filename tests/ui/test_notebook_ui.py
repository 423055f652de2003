"""The explorer inside JupyterLab: the first example notebook, run in a real JupyterLab, shows
the full explorer in its output; a core dragged there changes the mapping that the next cell
of the notebook reads (``explorer.show``, ``Explorer.mapped``).

JupyterLab is started by the test on a free local port, in a folder of its own (the
notebook copied there, its configuration and runtime files too), and stopped at the end.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from explorer.browser import CORE_XY, FIGURE_DRAWN, MESH_PLOT, free_port, wait_for_http

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "01_your_network.ipynb"
# the notebook's cells up to the explorer's (markdown and code: Shift+Enter runs each once)
CELLS_TO_THE_VIEW = 6


@pytest.fixture
def jupyterlab(tmp_path):
    """(URL of the first example notebook, the folder it is in), JupyterLab serving it."""
    shutil.copy(ROOT / "examples" / NOTEBOOK, tmp_path / NOTEBOOK)
    port, token = free_port(), secrets.token_hex(12)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the kernel imports this tree's packages
    for var, name in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"),
                      ("JUPYTERLAB_SETTINGS_DIR", "settings"), ("IPYTHONDIR", "ipython"),
                      ("JUPYTERLAB_WORKSPACES_DIR", "workspaces")):  # fmt: skip
        env[var] = str(tmp_path / ".jupyter" / name)
    log = open(tmp_path / "jupyterlab.log", "w")  # noqa: SIM115 - closed at teardown
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={tmp_path}", "--allow-root", "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?token={token}", tmp_path
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            lab.kill()
            lab.wait()
        log.close()


def cell_output(page, index: int):
    """The output area of the notebook's cell ``index`` (0: the first cell)."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea")


def run_to_the_view(page, url: str):
    """Open the notebook, run its cells up to the explorer's, and wait for the view to be
    drawn with its figures; returns the latency card's value."""
    page.set_viewport_size({"width": 1500, "height": 1000})
    page.goto(url)
    expect(page.get_by_text("Python 3 (ipykernel) | Idle")).to_be_visible(timeout=120_000)
    page.locator(".jp-Notebook .jp-Cell").first.click()
    for _ in range(CELLS_TO_THE_VIEW):
        page.keyboard.press("Shift+Enter")
    page.wait_for_function(FIGURE_DRAWN, timeout=180_000)
    latency = page.get_by_test_id("metric-latency-value")
    expect(latency).not_to_have_text("", timeout=60_000)
    return latency


@pytest.mark.ui
def test_a_drag_in_the_notebook_changes_the_mapping_the_next_cell_reads(page, jupyterlab):
    latency = run_to_the_view(page, jupyterlab[0])
    undo = page.get_by_role("button", name="↶ Undo")
    expect(undo).to_be_disabled()
    # the step simulated in the background, as on a served page (the kernel's loop runs it)
    simulated = page.get_by_test_id("metric-simulated")
    expect(simulated).to_contain_text("vs start", timeout=120_000)
    simulated_at_start = simulated.text_content()

    # core 0 (the first partition, packed-row) onto the last core, empty on this mesh
    page.evaluate(f"() => {{ {MESH_PLOT} plot.el.scrollIntoView({{block: 'center'}}); }}")
    page.wait_for_function(FIGURE_DRAWN)
    n_cores = page.evaluate(FIGURE_DRAWN)["cores"]
    (x0, y0), (x1, y1) = page.evaluate(CORE_XY, [0, n_cores - 1])
    page.mouse.move(x0, y0)
    page.mouse.down()
    # a first move at once: a pointer held still past Bokeh's press threshold is a press, not
    # the start of a drag (a loaded machine's first step of a slow move came too late)
    page.mouse.move(x0 + 12, y0 + 12)
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()
    expect(undo).to_be_enabled(timeout=60_000)  # the page's state took the drag
    # the kernel settles after the drag: the browser's copy of the page's sources comes back
    # through the comm, and the view must not answer it by writing them again (it once did,
    # four times a second, and the next cell never ran)
    idle = page.get_by_text("Python 3 (ipykernel) | Idle")
    expect(idle).to_be_visible(timeout=120_000)
    page.wait_for_timeout(2_000)
    expect(idle).to_be_visible()

    expect(simulated).not_to_have_text(simulated_at_start, timeout=120_000)  # simulated again

    # the next code cell (after its markdown cell) reads the mapping from Python
    # (its own editor clicked: no keystroke is spent on the markdown cell before it, which a
    # busy page may take late)
    reader = page.locator(".jp-Notebook .jp-Cell").nth(CELLS_TO_THE_VIEW + 1)
    reader.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    out = cell_output(page, CELLS_TO_THE_VIEW + 1)
    expect(out).to_contain_text("moved cores: 1", timeout=120_000)
    now = float(re.search(r"([\d.]+) µs now", out.text_content()).group(1))
    card = float(latency.text_content().split()[0].replace(",", ""))
    assert now == pytest.approx(card, rel=2e-3)  # the card and Python agree


@pytest.mark.ui
def test_a_search_runs_in_the_notebooks_explorer_and_its_best_can_be_adopted(page, jupyterlab):
    """The Evolution tab inside the notebook: its search runs in a worker thread of the
    kernel and reports on the kernel's loop, and the adopted best becomes the page's
    mapping (an edit Undo takes back)."""
    latency = run_to_the_view(page, jupyterlab[0])
    page.locator(".bk-tab").filter(has_text="Evolution").first.click()
    status = page.get_by_test_id("search-status")
    expect(status).to_contain_text("No search yet")
    page.get_by_role("button", name="Start", exact=True).click()
    expect(status).to_contain_text(re.compile(r"done after \d+ evaluations"), timeout=180_000)
    best = float(re.search(r"best ([\d.,]+) µs", status.text_content()).group(1).replace(",", ""))
    page.get_by_role("button", name="Adopt", exact=True).click()
    expect(page.get_by_role("button", name="↶ Undo")).to_be_enabled(timeout=60_000)
    page.locator(".bk-tab").filter(has_text="Mesh").first.click()
    card = float(latency.text_content().split()[0].replace(",", ""))
    assert card == pytest.approx(best, rel=2e-3)  # the adopted best is the page's mapping now
