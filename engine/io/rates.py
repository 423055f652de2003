"""Spike rates from outside: a per-population rate table, or a recorded NIR trace.

A rate table is a CSV with a header ``population,rate`` and one row per population to set
(its name as the network calls it, e.g. a NIR node's name; the rate in spikes per neuron
per time step, 0 to 1); populations it leaves out keep their rates. ``--rates FILE`` applies
one to any network on the command line.

A recorded trace (``nir.NIRGraphData``: per node, its ``spikes`` observable as
``TimeGriddedData`` — samples × steps × neurons, true where a neuron spiked — or as
``EventData``) gives every neuron its own rate: the spikes it fired over the samples and
steps recorded (``rates_from_trace``).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import replace

import numpy as np

from engine.errors import InputFileError, SpecError
from engine.io.files import csv_header, csv_rows, read_text, shown
from engine.model.network import Network

__all__ = ["rates_from_trace", "read_rate_table", "with_rates"]

TABLE_BYTES = 64 * 2**20  # the most a rate table may hold (a row per population)


def read_rate_table(path) -> dict[str, float]:
    """``{population: rate}`` from a ``population,rate`` CSV (errors name the file and line)."""
    text = read_text(path, "rate table", TABLE_BYTES).lstrip("\ufeff")
    rows = csv.DictReader(io.StringIO(text))
    header = csv_header(rows, str(path))
    if header is None or {"population", "rate"} - set(header):
        raise InputFileError(f"{path}: a rate table needs the header 'population,rate'")
    out: dict[str, float] = {}
    for line, row in enumerate(csv_rows(rows, str(path)), start=2):
        name = (row.get("population") or "").strip()
        try:
            rate = float(row.get("rate") or "")
        except ValueError:
            rate = math.nan
        if not name or not 0 <= rate <= 1:
            raise InputFileError(
                f"{path}:{line}: each row needs a population name and a rate in [0, 1] (spikes "
                f"per neuron per step), not {shown(row.get('population'))}, "
                f"{shown(row.get('rate'))}"
            )
        if name in out:
            raise InputFileError(f"{path}:{line}: population {shown(name)} is given twice")
        out[name] = rate
    return out


def with_rates(network: Network, rates: dict, *, where: str = "rates") -> Network:
    """``network`` with the rates of the populations ``rates`` names: one rate per population,
    or an array of one per neuron."""
    names = list(network.population_names)
    unknown = sorted(set(rates) - set(names))
    if unknown:
        raise SpecError(
            f"{where}: {', '.join(map(repr, unknown))} "
            f"{'is not a population' if len(unknown) == 1 else 'are not populations'} of "
            f"{network.name!r} ({', '.join(names)})"
        )
    rate = network.rate.copy()
    for name, value in rates.items():
        members = network.population == names.index(name)
        value = np.asarray(value, dtype=np.float64)
        if value.size not in (1, int(members.sum())):
            raise SpecError(
                f"{where}: {value.size} rates for population {name!r} of {int(members.sum())} "
                "neurons; give one, or one per neuron"
            )
        if not (np.all(np.isfinite(value)) and value.min() >= 0 and value.max() <= 1):
            raise SpecError(f"{where}: the rates of {name!r} must lie in [0, 1]")
        rate[members] = value.ravel() if value.size > 1 else float(value.ravel()[0])
    return replace(network, rate=rate)


def rates_from_trace(trace, *, dt: float = 1.0, prefix: str = "") -> dict[str, np.ndarray]:
    """Per node of a ``nir.NIRGraphData`` with a ``spikes`` observable, every neuron's spikes
    per time step over the recording (nested graphs' nodes named ``outer.inner``); ``dt``:
    the length of a time step in the unit of an ``EventData``'s times."""
    out: dict[str, np.ndarray] = {}
    for name, node in trace.nodes.items():
        key = prefix + str(name)
        if hasattr(node, "nodes"):  # a nested NIRGraphData
            out.update(rates_from_trace(node, dt=dt, prefix=key + "."))
            continue
        spikes = node.observables.get("spikes")
        if spikes is None:
            continue
        if hasattr(spikes, "data"):  # TimeGriddedData: samples × steps × neurons
            data = np.asarray(spikes.data)
            out[key] = np.clip(data.reshape(-1, data.shape[-1]).astype(bool).mean(axis=0), 0, 1)
        else:  # EventData: per sample, event indices (-1: none) up to t_max
            idx = np.asarray(spikes.idx).ravel()
            counts = np.bincount(idx[idx >= 0], minlength=int(spikes.n_neurons))
            steps = np.asarray(spikes.idx).shape[0] * max(float(spikes.t_max) / dt, 1.0)
            out[key] = np.clip(counts / steps, 0, 1)
    return out
