"""What the two search tabs (Evolution, Pareto) are alike: ``SearchTab``.

A search tab holds its settings, Start / Stop / Adopt, plots fed as the search runs, and a
status line; its search runs in an ``explorer.runner.SearchRunner`` whose publications come
on the session's document thread (``session_scheduler``), and closing the page stops it.
A subclass says what it starts (``start``), what it shows (``__panel__`` through
``layout``) and where its events go (the runner's listener: the session's search part for
Evolution, the view itself for Pareto).
"""

from __future__ import annotations

from html import escape

import panel as pn
import param

from explorer.runner import SearchRunner
from explorer.state import ExplorerState
from explorer.views._page import FONT, ICONS, session_scheduler

__all__ = ["SearchTab", "search_css"]


def search_css(prefix: str, colour: str, background: str) -> str:
    """A search tab's styles: its status line (``{prefix}-status``, left-ruled in
    ``colour`` on ``background`` while a search runs; grey when idle, red on an error),
    its title and its notes."""
    return f"""
.{prefix}-status {{ font-family: {FONT}; font-size: 13px; color: #374151;
    border-left: 4px solid {colour}; padding: 4px 10px; background: {background};
    border-radius: 4px; min-height: 20px; }}
.{prefix}-status.idle {{ border-left-color: #cbd2d9; background: #f7f8fa; color: #6b7280; }}
.{prefix}-status.error {{ border-left-color: #d62728; background: #fdecea; color: #8a1c1c; }}
.{prefix}-title {{ font-family: {FONT}; font-size: 15px; font-weight: 600; color: #1f2933; }}
.{prefix}-note {{ font-family: {FONT}; font-size: 12px; color: #6b7280; line-height: 1.4; }}
"""


class SearchTab(pn.viewable.Viewer):
    """A tab that runs a search on the session's network and hardware and watches it.

    Subclasses set ``prefix`` (their CSS classes), ``status_id`` (the status line's
    ``data-testid``), ``adopt_help`` and ``css`` (``search_css``), and define ``start``,
    ``stop`` and ``adopt``, which the buttons call."""

    state = param.ClassSelector(class_=ExplorerState)

    prefix = "search"
    status_id = "search-status"
    adopt_help = ""
    css = ""
    status_max_width: int | None = None

    def __init__(self, **params):
        super().__init__(**params)
        self.runner: SearchRunner | None = None
        self._start_button = pn.widgets.Button(
            label="Start", color="primary", icon=ICONS["play"], width=84
        )
        self._stop_button = pn.widgets.Button(
            label="Stop", color="danger", variant="outline", icon=ICONS["stop"], width=84
        )
        self._adopt_button = pn.widgets.Button(
            label="Adopt", color="success", icon=ICONS["check"], width=84,
            description=self.adopt_help,
        )  # fmt: skip
        self._start_button.on_click(lambda event: self.start())
        self._stop_button.on_click(lambda event: self.stop())
        self._adopt_button.on_click(lambda event: self.adopt())
        self._status = pn.pane.HTML(
            "", stylesheets=[self.css], max_width=self.status_max_width,
            sizing_mode="stretch_width",
        )  # fmt: skip
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.on_session_destroyed(lambda session_context: self.stop())

    @property
    def start_button(self) -> pn.widgets.Button:
        return self._start_button

    @property
    def stop_button(self) -> pn.widgets.Button:
        return self._stop_button

    @property
    def adopt_button(self) -> pn.widgets.Button:
        return self._adopt_button

    # the interface the buttons call; Evolution and Pareto each define all three
    def start(self) -> None:
        """Start button: a subclass starts its search (``new_runner`` gives the runner)."""
        raise NotImplementedError(f"{type(self).__name__} must define start")

    def stop(self) -> None:
        """Stop button: a subclass stops its running search."""
        raise NotImplementedError(f"{type(self).__name__} must define stop")

    def adopt(self) -> None:
        """Adopt button: a subclass puts the search's pick on the mesh."""
        raise NotImplementedError(f"{type(self).__name__} must define adopt")

    def new_runner(self, listener=None) -> SearchRunner:
        """A runner of this session's searches that publishes on the page's thread;
        ``listener``: where its events go (default: the session's search part)."""
        return SearchRunner(
            self.state, schedule=session_scheduler(pn.state.curdoc), listener=listener
        )

    def show_status(self, text: str, kind: str) -> None:
        """The status line: ``text``, styled ``kind`` ('' running, 'idle', 'error')."""
        self._status.object = (
            f'<div class="{self.prefix}-status {kind}" data-testid="{self.status_id}">'
            f"{escape(text)}</div>"
        )

    def layout(self, title: str, note: str, settings: list, plots: list, name: str):
        """The tab: a column of ``settings`` under its ``title`` and ``note`` (HTML), the
        ``plots`` beside it as far as the window allows, then on the next line; the status
        line last."""
        controls = pn.Column(
            pn.pane.HTML(f'<div class="{self.prefix}-title">{title}</div>',
                         stylesheets=[self.css]),
            pn.pane.HTML(f'<div class="{self.prefix}-note">{note}</div>',
                         stylesheets=[self.css], width=290),
            *settings,
            width=310,
        )  # fmt: skip
        return pn.FlexBox(
            controls, *plots, self._status, flex_wrap="wrap", sizing_mode="stretch_width",
            name=name,
        )  # fmt: skip

    def label(self, text: str, margin=(4, 10, 0, 10)) -> pn.pane.HTML:
        """A note-styled line among the settings."""
        return pn.pane.HTML(
            f'<div class="{self.prefix}-note">{text}</div>', stylesheets=[self.css], margin=margin
        )
