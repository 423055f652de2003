"""Hover help for the words a student meets on the Traffic tab, and names for the player's
buttons.

* ``GLOSSARY``: one sentence per term (flit, virtual channel, credit, saturation,
  back-pressure); ``with_terms`` marks the first mention of each in a piece of the page's
  HTML as ``<abbr title="…">``, which the browser shows on hover (dotted underline);
  ``term_help`` is the same sentence for a widget's ``description``.
* ``labelled_player``: Panel's ``Player`` draws its buttons as bare icons, with no text a
  screen reader or a hover could give; Panel offers no setting for it, so a callback in
  the page names them (``title`` and ``aria-label``) when the player is enabled (a run
  shown) or moves.
"""

from __future__ import annotations

import json
import re
from html import escape

import panel as pn

__all__ = ["GLOSSARY", "PLAYER_LABELS", "labelled_player", "term_help", "with_terms"]

GLOSSARY = {
    "flit": "A flit (flow-control digit) is the piece of a packet a link carries in one "
    "cycle; a packet of k flits needs k cycles on each link.",
    "virtual channel": "A virtual channel (VC) is one of several queues sharing a router's "
    "input port, so that a packet blocked in one does not block the packets in the others.",
    "credit": "A credit is a free buffer slot at the next router: a router sends a flit on "
    "only while it holds a credit for it, and waits when there is none.",
    "saturation": "Saturation is the offered load past which the mesh cannot deliver what "
    "it is offered: queues grow without end and latency runs away.",
    "back-pressure": "Back-pressure: a full buffer leaves the router before it without "
    "credits, so it stops sending, its own buffers fill, and the wait spreads upstream.",
}
# the forms of a term the page writes (plural, verb)
_FORMS = {
    "flit": r"flits?",
    "virtual channel": r"virtual channels?",
    "credit": r"credits?",
    "saturation": r"saturation|saturates",
    "back-pressure": r"back-pressure",
}
_TAG = re.compile(r"(<[^>]*>)")

PLAYER_LABELS = {
    "slower": "slower",
    "first": "first window",
    "previous": "previous window",
    "reverse": "play backwards",
    "pause": "pause",
    "play": "play the windows one after another",
    "next": "next window",
    "last": "last window",
    "faster": "faster",
}


def term_help(term: str) -> str:
    """The one-sentence help of ``term`` (a key of ``GLOSSARY``)."""
    return GLOSSARY[term]


def with_terms(html: str, terms=tuple(GLOSSARY)) -> str:
    """``html`` with the first mention of each of ``terms`` (outside tags) wrapped in
    ``<abbr title="its sentence">``; the rest unchanged."""
    parts = _TAG.split(html)
    for term in terms:
        pattern = re.compile(rf"\b(?:{_FORMS[term]})\b", re.IGNORECASE)
        for i in range(0, len(parts), 2):  # text between tags
            found = pattern.search(parts[i])
            if found:
                word = found.group(0)
                mark = f'<abbr title="{escape(GLOSSARY[term])}">{word}</abbr>'
                parts[i] = parts[i][: found.start()] + mark + parts[i][found.end() :]
                break
    return "".join(parts)


# the page's side: name the buttons of the Player whose property changed (``cb_obj``)
_LABEL = """
const labels = %s;
for (const v of Bokeh.index.all_views()) {
  if (v.model !== cb_obj || v.shadow_el == null) continue;
  for (const [name, text] of Object.entries(labels)) {
    const button = v.shadow_el.querySelector("button." + name);
    if (button != null) {
      button.title = text;
      button.setAttribute("aria-label", text);
    }
  }
}
"""


def labelled_player(player: pn.widgets.Player, labels: dict | None = None) -> pn.widgets.Player:
    """``player``, its buttons named (``PLAYER_LABELS``) as soon as it is enabled or moves
    (a callback in the page: the Player's own view names none)."""
    code = _LABEL % json.dumps(labels or PLAYER_LABELS)
    player.jscallback(value=code, disabled=code)
    return player
