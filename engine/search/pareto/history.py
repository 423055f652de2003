"""A multi-objective run's history, taken back to resume the run.

The file is the searches' one history format (``engine.search.history``); a pareto run's
first line holds the settings that decide which mappings it asks for
(``ParetoSearch.settings``). With the same settings and seed pymoo asks a resumed run for
the same mappings, so every mapping the history holds is taken from it instead of
evaluated again, and the resumed run is the uninterrupted one, value for value.
"""

from __future__ import annotations

import json

from engine.errors import InputFileError
from engine.search import history
from engine.search.pareto.search import ParetoResult

__all__ = ["known_from", "read_history", "run_of", "write_history"]


def run_of(result_or_search) -> history.Run:
    """The first line of a pareto run's history: its objectives and settings."""
    return history.Run(
        "pareto", tuple(result_or_search.config.objectives), _settings(result_or_search)
    )


def _settings(obj) -> dict:
    settings = obj.settings
    return settings() if callable(settings) else settings


def write_history(path, result: ParetoResult) -> None:
    """Every evaluation of ``result`` as the history a run writes, in one go."""
    end = "cancelled" if result.cancelled else "complete"
    history.write_history(path, run_of(result), result.evaluations, end=end)


def read_history(path, names, settings: dict | None = None) -> tuple[dict, int]:
    """(the feasible evaluations of a history file, (cores per population, placement,
    co-design choice) → their ``Record``, for ``ParetoSearch(known=…)``; how many whole
    records it has). A last line cut short by a kill is left out."""
    got = history.read_history(path)
    return known_from(got, path, names, settings), len(got.records)


def known_from(got: history.HistoryFile, path, names, settings: dict | None = None) -> dict:
    """The feasible evaluations of the history ``got`` (read from ``path``) by mapping.
    ``InputFileError`` for a history of another search or of other objectives, or (given
    ``settings``, ``ParetoSearch.settings``) of a run with other settings — it would not
    resume that run."""
    names = tuple(names)
    if got.run.kind != "pareto":
        raise InputFileError(
            f"{path} is the history of an {got.run.kind} run, not of a pareto run: it does "
            "not resume one"
        )
    if settings is not None:
        mine = json.loads(json.dumps(settings))
        theirs = got.run.settings
        differ = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
        if differ:
            said = ", ".join(f"{k} {theirs.get(k)!r}" for k in differ)
            raise InputFileError(
                f"{path} is the history of a run with other settings ({said}); resume it "
                "with the settings it was run with"
            )
    if got.run.objectives != names:
        have = ",".join(got.run.objectives)
        raise InputFileError(
            f"{path}: not the history of a run of objectives {','.join(names)} (its "
            f"objectives are {have}: resume with --objectives {have})"
        )
    history.check_records(got.records, path)
    return {(r.cores_per_population, r.placement, r.knobs): r for r in got.records if r.feasible}
