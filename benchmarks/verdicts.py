"""The rules every reproduction row follows: what earns **reproduced**, **same shape** or
**differs** (docs/reproduction.md, "How a verdict is given", says the same in prose).

A row tests one statement of a paper — it quotes it (``quote``, a short excerpt, and its
``section``) — and keeps the figures its verdict follows from (``evidence``):

``values``
    figures the paper gives, each ``{"name", "kind", "paper", "ours"}``; a stochastic one
    has ``"seeds": spread(...)`` and ``ours`` is their mean.
``orders``
    each pairwise order the paper states, ``{"said": "a < b", "a", "b", "op"}`` (``op``
    ``<`` or ``<=``); a stochastic side has ``"a_seeds"``/``"b_seeds"``.
``networks``
    a ratio claim's ratio on each network compared, ``{"ratios": {name: r}, "side":
    "below" | "above"}`` (the side of 1 the paper's figure is on).
``missing``
    what the statement covers that could not be compared (a network a partitioner did not
    finish), each with why.
``cannot``
    what stops the row from running here.

``judge(evidence)`` gives the verdict:

- **cannot run** when ``cannot`` is set;
- **reproduced** when there are values, each within its kind's tolerance of the paper's
  figure (``TOLERANCES``), every stated order holds and nothing the statement covers went
  uncompared (``missing``); a mean ratio needs no network on its side of 1 (the paper's
  mean does not say every network is), but its row shows how many are;
- **same shape** when not reproduced but there is an order or a network ratio to compare,
  and every order holds and every network lies on the paper's side — a statement with no
  figure of the paper's to match (an order, a side of 1) is at most this;
- **differs** otherwise (its row says the reason measured).

An order between deterministic figures holds when it is strictly true (``<``) or true
(``<=``); between stochastic ones, when the difference of the means lies on the stated
side by more than twice its standard error (over the seeds); by more than twice the other
way it is reversed, and otherwise unresolved — not held. Deterministic figures that are
equal under ``<`` are tied — not held either.

``tests/benchmarks/test_verdicts.py`` holds every recorded row of
``benchmarks/results/papers/*.json`` to these rules.
"""

from __future__ import annotations

import math
import statistics

__all__ = [
    "TOLERANCES", "VERDICTS", "judge", "order", "order_state", "paper_row", "ratio_side",
    "seeds_text", "spread", "value", "within",
]  # fmt: skip

VERDICTS = ("reproduced", "same shape", "differs", "cannot run")

# kind -> (how far from the paper's figure ours may lie, said in words)
TOLERANCES = {
    "time": (0.05, "within ±5 % of the paper's time"),
    "percent": (0.20, "within ±20 % of the paper's percentage (35.8 % → 28.6–43.0 %)"),
    "ratio": (0.10, "within ±10 % of the paper's ratio"),
    "exact": (0.0, "equal (a closed form, a count, a mesh's sides)"),
    "exponent": (1.0, "the paper's bound 10^k exceeded within its decade: 10^k ≤ ours < 10^(k+1)"),
    "magnitude": (0.5, "the same order of magnitude: |log10(ours / paper)| < 0.5"),
}
SE_FACTOR = 2.0  # a stochastic order holds beyond this many standard errors
SHOWN = 3  # orders a reason names of each state (how many there are, it always says)


def spread(samples) -> dict:
    """n, mean, std (sample), min and max of a stochastic figure's values, one per seed."""
    v = [float(x) for x in samples]
    return {"n": len(v), "mean": statistics.fmean(v),
            "std": statistics.stdev(v) if len(v) > 1 else 0.0, "min": min(v), "max": max(v),
            "values": v}  # fmt: skip


def seeds_text(s: dict, digits: int = 2, unit: str = "") -> str:
    """'15.47 ± 0.64 µs (n = 5, 14.6–16.3)': a stochastic figure with its spread."""
    f = f"{{:.{digits}f}}"
    return (f"{f.format(s['mean'])} ± {f.format(s['std'])}{unit} (n = {s['n']}, "
            f"{f.format(s['min'])}–{f.format(s['max'])})")  # fmt: skip


def within(kind: str, paper: float, ours: float) -> bool:
    """Whether ``ours`` lies within ``kind``'s tolerance of the paper's figure."""
    tol = TOLERANCES[kind][0]
    if kind == "exact":
        return abs(ours - paper) <= 1e-9 * max(1.0, abs(paper))
    if kind == "exponent":  # paper: k of "more than 10^k"; ours: log10 of our count
        return paper <= ours < paper + tol
    if kind == "magnitude":
        return paper > 0 and ours > 0 and abs(math.log10(ours / paper)) < tol
    return abs(ours - paper) <= tol * abs(paper)


def value(name: str, kind: str, paper: float, ours, **extra) -> dict:
    """A figure the paper gives beside ours (a list of per-seed values: their mean, with the
    spread)."""
    if isinstance(ours, list | tuple):
        s = spread(ours)
        return {"name": name, "kind": kind, "paper": paper, "ours": s["mean"], "seeds": s,
                **extra}  # fmt: skip
    return {"name": name, "kind": kind, "paper": paper, "ours": float(ours), **extra}


def order(said: str, a, b, op: str = "<") -> dict:
    """A pairwise order the paper states, ``a op b``; ``a`` and ``b`` a figure each, or a list
    of per-seed values."""
    out = {"said": said, "op": op}
    for key, x in (("a", a), ("b", b)):
        if isinstance(x, list | tuple):
            out[f"{key}_seeds"] = spread(x)
            out[key] = out[f"{key}_seeds"]["mean"]
        else:
            out[key] = float(x)
    out["state"] = order_state(out)
    return out


def _se(s: dict | None) -> float:
    return s["std"] / math.sqrt(s["n"]) if s and s["n"] > 1 else 0.0


def order_state(o: dict) -> str:
    """``holds``, ``reversed``, ``unresolved`` (stochastic, and within the seeds' spread) or
    ``tied`` (deterministic and equal, under ``<``)."""
    a, b = o["a"], o["b"]
    se = math.hypot(_se(o.get("a_seeds")), _se(o.get("b_seeds")))
    if se > 0:
        gap = b - a  # > 0 when a < b
        if gap > SE_FACTOR * se:
            return "holds"
        return "reversed" if -gap > SE_FACTOR * se else "unresolved"
    if o["op"] == "<=":
        return "holds" if a <= b else "reversed"
    return "holds" if a < b else ("tied" if a == b else "reversed")


def ratio_side(ratios: dict, side: str) -> dict:
    """A ratio claim over networks: each network's ratio and the side of 1 the paper's is on."""
    return {"ratios": {k: float(v) for k, v in ratios.items()}, "side": side}


def _on_side(r: float, side: str) -> bool:
    return r < 1 if side == "below" else r > 1


def judge(evidence: dict) -> str:
    """The verdict a row's evidence earns (module note)."""
    if evidence.get("cannot"):
        return "cannot run"
    values = evidence.get("values", [])
    orders = evidence.get("orders", [])
    nets = evidence.get("networks")
    orders_hold = all(order_state(o) == "holds" for o in orders)
    nets_hold = nets is None or all(_on_side(r, nets["side"]) for r in nets["ratios"].values())
    missing = bool(evidence.get("missing"))
    matched = values and all(within(v["kind"], v["paper"], v["ours"]) for v in values)
    if matched and orders_hold and not missing:
        return "reproduced"
    if (orders or nets) and orders_hold and nets_hold:
        return "same shape"
    return "differs"


def paper_row(claim: str, section: str, quote: str, paper: str, ours: str, command: str,
              evidence: dict, reason: str = "", reruns=()) -> dict:  # fmt: skip
    """A row of a paper's table: the statement tested (``section``, ``quote``), the paper's
    figure and MeshScope's as text, the command that reruns it, the evidence and the verdict
    it earns (``judge``), the reason (measured) when it is not reproduced, and ``reruns``:
    commands whose JSON gives a recorded figure (``{"argv", "key", "value"}``), which
    ``tests/benchmarks/test_reruns.py`` runs when cheap."""
    verdict = judge(evidence)
    if verdict != "reproduced" and not reason:
        raise ValueError(f"{claim}: a row that is {verdict} says why (the reason measured)")
    return {"claim": claim, "section": section, "quote": quote, "paper": paper,
            "meshscope": ours, "command": command, "verdict": verdict,
            "reason": reason, "evidence": evidence, "reruns": list(reruns)}  # fmt: skip


def order_summary(orders) -> str:
    """'2 of 6 orders reversed (a < b, c < d), 1 unresolved (…)' — or '' when all hold."""
    bad = {}
    for o in orders:
        s = order_state(o)
        if s != "holds":
            bad.setdefault(s, []).append(o["said"])
    parts = []
    for k, v in bad.items():
        shown = "; ".join(v[:SHOWN]) + (f"; and {len(v) - SHOWN} more" if len(v) > SHOWN else "")
        parts.append(f"{len(v)} of {len(orders)} orders {k} ({shown})")
    return ", ".join(parts)


def side_summary(nets: dict) -> str:
    """'5 of 8 networks below 1, 3 above (alexnet 2.32×, …)'."""
    r = nets["ratios"]
    on = [k for k, v in r.items() if _on_side(v, nets["side"])]
    off = [k for k in r if k not in on]
    other = "above" if nets["side"] == "below" else "below"
    text = f"{len(on)} of {len(r)} networks {nets['side']} 1"
    if off:
        text += f", {len(off)} {other} ({', '.join(f'{k} {r[k]:.2f}×' for k in off)})"
    return text
