"""The MeshScope explorer: a Panel app that shows one mapping and its evaluation.

``explorer.state`` holds a session's data (no UI toolkit), ``explorer.views`` draws it,
``explorer.app`` assembles the page and serves it (``meshscope serve``).
"""
