"""The public API: every name of ``engine.__all__`` and ``explorer.__all__`` imports, has a
docstring and an example in docs/api.md, and every example of docs/api.md runs."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"
PACKAGES = ("engine", "explorer")
# parameters with a default that may stay positional: each names what a function works on
WHAT = {"network", "hardware", "connections", "link", "pattern", "rates", "base", "evaluation"}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def public_names() -> list[tuple[str, str]]:
    out = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        out += [(package, name) for name in module.__all__]
    return out


@pytest.mark.parametrize("package, name", public_names())
def test_every_public_name_imports_has_a_docstring_and_an_example(package, name):
    obj = getattr(importlib.import_module(package), name)
    doc = inspect.getdoc(obj) or ""
    assert len(doc.split()) >= 5, f"{package}.{name} has no docstring worth the name"
    code = "\n".join(python_blocks(DOC.read_text()))
    used = rf"\b{name}\b" if package == "engine" else rf"\bexplorer\.{name}\b"
    assert re.search(used, code), f"docs/api.md has no example that uses {package}.{name}"


def test_every_public_function_takes_its_options_by_keyword():
    """A public function's parameters after the first few that say what it works on are
    keyword-only: each has a default, or is keyword-only (``*``)."""
    for package, name in public_names():
        obj = getattr(importlib.import_module(package), name)
        if not inspect.isfunction(obj):
            continue
        for p in inspect.signature(obj).parameters.values():
            if p.kind == p.POSITIONAL_OR_KEYWORD and p.default is not p.empty:
                # a positional option: allowed only where it names what is worked on
                assert p.name in WHAT, (
                    f"{package}.{name}({p.name}=…) is positional; make it keyword-only"
                )


def test_the_names_are_private_outside_all():
    import engine.api
    import explorer.notebook

    for module in (engine.api, explorer.notebook):
        for name, obj in vars(module).items():
            if name.startswith("_") or inspect.ismodule(obj) or name in module.__all__:
                continue
            if getattr(obj, "__module__", None) == module.__name__:
                pytest.fail(f"{module.__name__}.{name} is neither in __all__ nor private")


def test_importing_the_packages_leaves_the_heavy_ones_for_later():
    heavy = ("numba", "scipy", "panel", "bokeh", "engine.api", "explorer.notebook")
    code = f"import sys, engine, explorer; print([m for m in {heavy} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_examples_of_docs_api_run(tmp_path, monkeypatch):
    """Every ``python`` block of docs/api.md, in order, in one namespace (a notebook's
    session), in a folder of its own."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "docs_api"}
    for i, block in enumerate(python_blocks(DOC.read_text())):
        try:
            exec(compile(block, f"docs/api.md block {i + 1}", "exec"), namespace)  # noqa: S102
        except Exception as e:
            raise AssertionError(f"docs/api.md, python block {i + 1} fails:\n{block}") from e
    assert (tmp_path / "best.json").exists() and (tmp_path / "found.json").exists()


def test_the_readme_s_five_lines_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = python_blocks((ROOT / "README.md").read_text())
    assert len([line for line in block.splitlines() if line.strip()]) == 5
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    assert namespace["view"].mapped.network.name == "sparse-mlp-1"
