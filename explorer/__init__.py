"""The MeshScope explorer: a Panel app that shows one mapping and its evaluation.

``explorer.state`` holds a session's data (no UI toolkit), ``explorer.views`` draws it,
``explorer.app`` assembles the page and serves it (``meshscope serve``), and
``explorer.notebook`` shows the same page in a Jupyter notebook, bound to the notebook's
objects: ``explorer.show(mapped)``, ``explorer.show_mesh(mapped)``,
``explorer.show_sweep(result)`` (docs/api.md). Panel is imported when one of them is first
used, so ``import explorer`` stays light.
"""

_NOTEBOOK = ("Explorer", "show", "show_mesh", "show_sweep")


def __getattr__(name: str):
    if name in _NOTEBOOK:
        from explorer import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'explorer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_NOTEBOOK])


__all__ = ["Explorer", "show", "show_mesh", "show_sweep"]
