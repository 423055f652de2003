"""The shape of the tree: the README's code map matches it, and imports only go downwards."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_map() -> list[str]:
    """The paths of the README's code map, nesting resolved (``engine/io/``, ``engine/cli.py``)."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Code map.*?```\n(.*?)```", text, re.S).group(1)
    paths, parent = [], ""
    for line in block.splitlines():
        if not line.strip() or line.startswith(" " * 25):  # a wrapped description
            continue
        name = line.split()[0]
        if line.startswith("  "):
            paths.append(parent + name)
        else:
            parent = name
            paths.append(name)
    return paths


def test_every_path_of_the_code_map_exists():
    missing = [p for p in code_map() if not (ROOT / p).exists()]
    assert missing == []


def test_every_module_and_package_of_engine_and_explorer_is_in_the_code_map():
    listed = set(code_map())
    for top in ("engine", "explorer"):
        for entry in sorted((ROOT / top).iterdir()):
            if entry.name.startswith("__") or entry.name.startswith("."):
                continue
            if entry.is_dir() and not any(entry.glob("*.py")) and entry.name != "presets":
                continue
            name = f"{top}/{entry.name}" + ("/" if entry.is_dir() else "")
            assert name in listed, f"{name} is not in the README's code map"


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every import statement of a file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.module, [a.name for a in node.names]))
    return out


def test_the_engine_never_imports_the_explorer_or_a_ui_toolkit():
    for path in (ROOT / "engine").rglob("*.py"):
        for module, _ in imports(path):
            top = module.split(".")[0]
            assert top not in ("explorer", "panel", "bokeh", "holoviews"), f"{path}: {module}"


def test_the_explorer_uses_only_public_names_of_the_engine():
    for path in (ROOT / "explorer").rglob("*.py"):
        for module, names in imports(path):
            if module.split(".")[0] != "engine":
                continue
            private = [p for p in module.split(".") if p.startswith("_")]
            private += [n for n in names if n.startswith("_")]
            assert private == [], f"{path.relative_to(ROOT)}: from {module} import {names}"


def test_the_tests_mirror_the_packages():
    """tests/engine/simulate/ tests engine/simulate/, and so on: every folder of tests/engine and
    tests/explorer is a package of the tree, and no flat file (``test_simulate_step.py``) stands
    for a package's folder."""
    for top in ("engine", "explorer"):
        packages = {p.name for p in (ROOT / top).iterdir() if (p / "__init__.py").exists()}
        for folder in (ROOT / "tests" / top).rglob("*"):
            if folder.is_dir() and folder.name != "__pycache__":
                package = ROOT / top / folder.relative_to(ROOT / "tests" / top)
                assert (package / "__init__.py").exists(), f"{folder} mirrors no package"
        flat = [
            f.name
            for f in (ROOT / "tests" / top).glob("test_*.py")
            if any(f.stem.startswith(f"test_{p}_") for p in packages)
            and not (ROOT / top / f"{f.stem.removeprefix('test_')}.py").exists()  # partition_graph
        ]
        assert flat == [], f"move these into their package's folder: {flat}"


def test_no_test_file_imports_another():
    """Shared helpers live in tests/support/: a test module is loaded by pytest alone, once."""
    for path in (ROOT / "tests").rglob("*.py"):
        for module, _ in imports(path):
            parts = module.split(".")
            assert not (parts[0] == "tests" and parts[-1].startswith("test_")), (
                f"{path.relative_to(ROOT)} imports {module}: move what it shares to tests/support/"
            )
