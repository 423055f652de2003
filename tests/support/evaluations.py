"""Comparing two evaluations field by field, bit for bit (the incremental and the full path)."""

from __future__ import annotations

import dataclasses

import numpy as np

ARRAY_FIELDS = (
    "cores", "neurons", "synops", "synmem_reads", "link_messages", "link_us",
    "link_mesh_messages",
)  # fmt: skip


def assert_same_evaluation(a, b):
    """Every field of two ``Evaluation``s equal, arrays element by element."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name in ARRAY_FIELDS:
            np.testing.assert_array_equal(x, y, err_msg=f.name)
        elif f.name == "core_terms_us":
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)
        elif f.name != "population":
            assert x == y, f.name
