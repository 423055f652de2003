"""Shared look of the explorer's Bokeh plots."""

from __future__ import annotations

__all__ = ["FONT", "style_figure"]

FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'


def style_figure(p, x_label: str, y_label: str) -> None:
    """Quiet axes, labels and grid in the page's font."""
    p.toolbar.logo = None
    p.title.text_font_size = "14px"
    p.title.text_color = "#374151"
    p.title.text_font = FONT
    p.xaxis.axis_label, p.yaxis.axis_label = x_label, y_label
    for axis in (p.xaxis, p.yaxis):
        axis.axis_label_text_font_style = "normal"
        axis.axis_label_text_color = "#4b5563"
        axis.axis_label_text_font = FONT
        axis.major_label_text_color = "#6b7280"
        axis.axis_line_color = "#9ca3af"
    p.grid.grid_line_color = "#eceff3"
    p.outline_line_color = None
