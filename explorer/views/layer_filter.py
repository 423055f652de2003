"""A filter of a network's layers: a button saying which are chosen, and a menu of check boxes.

Layer names come from the network, which a client may have uploaded, so they are set as text
(``textContent``) in the browser, never as markup. Bokeh's ``MultiChoice`` (Choices.js)
renders its options as HTML, which let an uploaded network's population name run script in
the page, and logs a deprecation warning on every page.
"""

from __future__ import annotations

import param
from panel.reactive import ReactiveHTML

from explorer.views._page import FONT

__all__ = ["LayerFilter"]

_CSS = f"""
:host {{ overflow: visible; }}
.lf {{ position: relative; font: 13px {FONT}; color: #1f2933; }}
.lf-toggle {{ font: 13px {FONT}; width: 100%; text-align: left; padding: 4px 8px;
              background: #fff; border: 1px solid #cbd2d9; border-radius: 4px; cursor: pointer;
              white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.lf-toggle:hover {{ border-color: #9aa5b1; }}
.lf-menu {{ position: absolute; top: 100%; left: 0; z-index: 20; min-width: 100%;
            max-height: 320px; overflow-y: auto; background: #fff; border: 1px solid #cbd2d9;
            border-radius: 4px; box-shadow: 0 4px 12px rgba(0, 0, 0, .12); padding: 4px 0; }}
.lf-item {{ display: flex; align-items: center; gap: 6px; padding: 3px 10px; cursor: pointer;
            white-space: nowrap; }}
.lf-item:hover {{ background: #f3f4f6; }}
.lf-item .swatch {{ width: 12px; height: 12px; border-radius: 2px; flex: none; }}
.lf-all {{ border-bottom: 1px solid #e5e7eb; color: #4b5563; }}
"""

# drawn in the browser from ``names``, ``colors`` and ``value``: every name set as text
_DRAW = """
const element = (tag, cls, text) => {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text !== undefined) el.textContent = text;
  return el;
};
const chosen = new Set(data.value);
const names = data.names;
const said = chosen.size === 0 ? data.none_text
  : chosen.size === 1 ? names[[...chosen][0]]
  : `${chosen.size} layers`;
toggle.textContent = `${said} \u25be`;
toggle.title = (data.hint ? `${data.hint}. Now: ` : "") + (chosen.size === 0 ? data.none_text
  : [...chosen].sort((a, b) => a - b).map((k) => names[k]).join(", "));
const all = element("label", "lf-item lf-all");
const every = document.createElement("input");
every.type = "checkbox";
every.dataset.all = "1";
every.checked = chosen.size === 0;
all.append(every, element("span", "lf-name", data.none_text));
menu.replaceChildren(all, ...names.map((name, k) => {
  const label = element("label", "lf-item");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.value = String(k);
  box.checked = chosen.has(k);
  const swatch = element("span", "swatch");
  swatch.style.background = data.colors[k] || "#cbd2d9";
  label.append(box, swatch, element("span", "lf-name", name));
  return label;
}));
"""

_CLOSE_ELSEWHERE = """
document.addEventListener("click", (event) => {
  if (!event.composedPath().includes(root)) menu.hidden = true;
});
"""

_PICKED = """
const clicked = event.target;
if (clicked.tagName !== "INPUT") return;
if (clicked.dataset.all) {
  data.value = [];
} else {
  data.value = [...menu.querySelectorAll("input[value]:checked")].map((b) => Number(b.value));
}
"""


class LayerFilter(ReactiveHTML):
    """Which layers' flows the links show: ``value`` holds their indices ([] for all)."""

    names = param.List(default=[], item_type=str, doc="the layers, in order")
    colors = param.List(default=[], item_type=str, doc="each layer's colour (its swatch)")
    value = param.List(default=[], item_type=int, doc="indices of the chosen layers; []: all")
    none_text = param.String(default="all layers", doc="what the button says with none chosen")
    hint = param.String(default="", doc="what the filter does: the button's tooltip says it")

    _template = (
        '<div id="root" class="lf">'
        '<button id="toggle" class="lf-toggle" type="button" onclick="${script(\'open\')}">'
        "</button>"
        '<div id="menu" class="lf-menu" hidden onchange="${script(\'picked\')}"></div>'
        "</div>"
    )
    _scripts = {
        "render": _DRAW + _CLOSE_ELSEWHERE,
        "names": _DRAW,
        "colors": _DRAW,
        "value": _DRAW,
        "hint": _DRAW,
        "open": "menu.hidden = !menu.hidden;",
        "picked": _PICKED,
    }

    def __init__(self, **params):
        super().__init__(stylesheets=[_CSS], **params)

    def set_layers(self, names, colors) -> None:
        """Another network's layers: none chosen."""
        self.param.update(names=[str(n) for n in names], colors=list(colors), value=[])
