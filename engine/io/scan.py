"""Numba kernels that scan the bytes of a text file once, before a parser is trusted with it."""

from __future__ import annotations

import numba

__all__ = ["json_depth"]


@numba.njit(cache=True, nogil=True)
def json_depth(b, limit):
    """How deep the brackets of JSON bytes ``b`` nest, strings left out (stops above ``limit``)."""
    depth, deepest, inside, escaped = 0, 0, False, False
    for c in b:
        if inside:
            if escaped:
                escaped = False
            elif c == 92:  # backslash
                escaped = True
            elif c == 34:  # quote
                inside = False
        elif c == 34:
            inside = True
        elif c == 91 or c == 123:  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif c == 93 or c == 125:  # ] }
            depth -= 1
    return deepest
