"""Helpers shared by the generators (CSR assembly is ``engine.arrays.csr_from_pairs``)."""

from __future__ import annotations

from engine.errors import InvalidNetworkError


def require(condition: bool, message: str):
    if not condition:
        raise InvalidNetworkError(message)
