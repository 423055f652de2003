"""What several browser tests do on a page (beyond ``explorer.browser``, which the page
benchmarks share too)."""

from __future__ import annotations


def tab(page, name: str):
    """A header of the page's Bokeh tabs (they carry no ARIA role)."""
    return page.locator(".bk-tab").filter(has_text=name).first
