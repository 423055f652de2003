"""The notebooks of examples/ run from the first cell to the last (nbclient and ipykernel):
a cell that raises fails the test. Each runs in a folder of its own (what it writes stays
there), beside a link to tests/ for the NIR file the second one reads."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))


def test_there_are_the_three_examples():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03"]


def text_of(nb) -> str:
    return "\n".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebook_runs(path, tmp_path, monkeypatch):
    folder = tmp_path / "examples"
    folder.mkdir()
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        f"{path.name} is stored with outputs: clear them (Edit › Clear Outputs of All Cells)"
    )
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this tree's packages
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    out = text_of(nb)
    assert "Traceback" not in out
    if path.name.startswith("01"):
        assert "moved cores: 0" in out and "read back" in out
        assert (folder / "my-net-tuned.json").exists() and (folder / "my-net.npz").exists()
    elif path.name.startswith("02"):
        assert "best:" in out
    else:
        assert "zero-load latency" in out and "o1turn" in out
