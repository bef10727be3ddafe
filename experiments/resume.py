"""Resuming an interrupted study into its own results directory (`--resume DIR`, `make … RESUME=DIR`).

    check_arguments(out, "experiments.multitenant", {...})            # ResumeError: not the arguments DIR was made with
    old = reopen(out / "runs.csv", COLUMNS, MULTITENANT_KEY, complete)  # the finished runs' rows; failed ones moved
    ... run every unit whose key is not in old.done, appending to the same runs.csv (CsvLog(..., resume=True)) ...

The key of a row is the text of its key columns, as runs.csv holds them (`row_key`): a run that would write a row
with a key already in runs.csv is done and skipped. A candidate run's key is taken from the row it would write, so
that the rows and the skip logic cannot disagree about formatting (`sweep_key`). The key columns:

- a sweep (`SWEEP_KEY`): the point (protocol, workers, size_elems, loss, straggler_ms, background_mbps, sparsity,
  overlap), rep and seed (the scenario's seed + rep; the scenario is the one the directory was made with: a resume
  with another is refused); dtype and bw_mbps are the scenario's, the same on every row; a runs.csv from before the
  sparsity or the overlap axis reads as sparsity 0 or overlap 0 (`SWEEP_DEFAULTS`);
- `make multitenant` (`MULTITENANT_KEY`): protocol and rep; every job of a repetition runs at once, so a repetition is
  done when its `jobs` rows are there (the job column tells them apart);
- `make train` (`TRAIN_KEY`): protocol and seed (a training run that fails stops the study and writes no row).

Failed runs are retried: a unit whose rows say it did not verify (a sweep's `verified` = 0, a multitenant repetition
with a job that did not verify or is missing) is not done. `reopen` moves its rows to retried.csv beside runs.csv (so
nothing measured is lost) and rewrites runs.csv with the rows it keeps, so the summary counts each run once. A last
line an interruption cut short is dropped.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.rows import Row
from experiments.scenario import RunPoint, Scenario

__all__ = ["ARGUMENTS", "MULTITENANT_KEY", "RETRIED", "SWEEP_DEFAULTS", "SWEEP_KEY", "TRAIN_KEY", "Reopened",
           "ResumeError", "add_resume_argument", "check_arguments", "made_with", "read_rows", "remember", "reopen",
           "resolve", "resolved", "row_key", "run_name", "sweep_key"]

SWEEP_KEY = ("protocol", "workers", "size_elems", "loss", "straggler_ms", "background_mbps", "sparsity", "overlap",
             "rep", "seed")
SWEEP_DEFAULTS = {"sparsity": "0.0", "overlap": "0.0"}
"""Key columns an older sweep's runs.csv lacks, as a row of the axis's default value writes them."""
MULTITENANT_KEY = ("protocol", "rep")
TRAIN_KEY = ("protocol", "seed")
ARGUMENTS = "arguments.json"
"""In a results directory: the command and arguments that made it, and values it resolved (a calibrated rate)."""
RETRIED = "retried.csv"
"""Beside runs.csv: rows of failed runs that a resume ran again."""


class ResumeError(ValueError):
    """A directory cannot be resumed by this command; the message says why and what to do."""


def row_key(row: Mapping[str, Any], columns: Sequence[str]) -> tuple[str, ...]:
    """The row's key: its key columns' text as runs.csv holds it (a value as csv writes it: str(), None as "")."""
    return tuple("" if row.get(c) is None else str(row[c]) for c in columns)


def sweep_key(point: RunPoint, rep: int, sc: Scenario) -> tuple[str, ...]:
    """The key of the row that repetition `rep` of `point` writes."""
    return row_key(Row.failed(point, rep, sc, "").csv_row(), SWEEP_KEY)


def add_resume_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--resume", type=Path, metavar="DIR", default=None,
                   help="continue the interrupted study in DIR (its results directory): the runs DIR/runs.csv has "
                        "rows for are skipped, failed ones run again, the rest appended there")


def read_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """A CSV file's header and complete rows (a last line cut short, without its line end or with too few fields, is
    left out); ([], []) when it does not exist or is empty."""
    if not path.exists():
        return [], []
    with open(path, newline="") as f:
        text = f.read()
    if not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
    lines = list(csv.reader(io.StringIO(text, newline="")))
    if not lines:
        return [], []
    header = lines[0]
    return header, [dict(zip(header, values)) for values in lines[1:] if len(values) == len(header)]


@dataclass(frozen=True)
class Reopened:
    """What a resume keeps of runs.csv."""

    rows: list[dict[str, str]]
    """The rows of finished units, as read (a column an older file lacks is absent)."""
    done: set[tuple[str, ...]]
    """Their keys."""
    retried: int
    """Rows of failed units moved to retried.csv (their units run again)."""


def reopen(path: Path, columns: Sequence[str], key: Sequence[str],
           complete: Callable[[tuple[str, ...], list[dict[str, str]]], bool] = lambda k, rows: True,
           normalize: Callable[[dict[str, str]], Mapping[str, Any]] = dict,
           defaults: Mapping[str, str] | None = None) -> Reopened:
    """Prepare `path` (a runs.csv, or another file of rows keyed alike) for a resume: group its rows by `key`, keep
    the groups `complete(key, rows)` accepts, move the others' rows to retried.csv beside it, and rewrite it with
    `columns` as the header and the kept rows (each through `normalize`, which fills a column an older file lacks).
    `defaults`: key columns an older file may lack, and their text in its rows (`SWEEP_DEFAULTS`). ResumeError if
    the file has columns that `columns` lacks or lacks a key column."""
    header, rows = read_rows(path)
    absent = {c: v for c, v in (defaults or {}).items() if header and c not in header}
    rows = [{**r, **absent} for r in rows] if absent else rows
    unknown = [c for c in header if c not in columns]
    if unknown:
        raise ResumeError(f"{path} has columns this version does not write ({', '.join(unknown)}): resume it with "
                          "the version that made it")
    missing = [c for c in key if header and c not in header and c not in absent]
    if missing:
        raise ResumeError(f"{path} has no {', '.join(missing)} column: not the table this command writes")
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for r in rows:
        groups.setdefault(row_key(r, key), []).append(r)
    done = {k for k, rs in groups.items() if complete(k, rs)}
    kept = [r for r in rows if row_key(r, key) in done]
    failed = [r for r in rows if row_key(r, key) not in done]
    if failed:
        retried = path.with_name(f"{path.stem}-{RETRIED}" if path.name != "runs.csv" else RETRIED)
        new = not retried.exists()
        with open(retried, "a", newline="") as f:
            w = csv.DictWriter(f, header, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerows(failed)
            _sync(f)
    _replace(path, columns, [normalize(r) for r in kept])
    return Reopened(kept, done, len(failed))


def _replace(path: Path, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """Write the file beside `path` and rename it over: an interruption leaves the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
        _sync(f)
    os.replace(tmp, path)


def _sync(f: Any) -> None:
    f.flush()
    os.fsync(f.fileno())


# --- the arguments a directory was made with ------------------------------------------------------------------------

def _plain(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as JSON holds them (paths absolute, as text; tuples as lists)."""
    return json.loads(json.dumps(dict(arguments), default=lambda v: str(v.resolve() if isinstance(v, Path) else v)))


def _load(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / ARGUMENTS).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ResumeError(f"{out / ARGUMENTS}: unreadable ({exc})") from None


def _store(out: Path, state: Mapping[str, Any]) -> None:
    tmp = out / (ARGUMENTS + ".tmp")
    with open(tmp, "w") as f:
        f.write(json.dumps(state, indent=1) + "\n")
        _sync(f)
    os.replace(tmp, out / ARGUMENTS)


def remember(out: Path, command: str, arguments: Mapping[str, Any]) -> None:
    """Record in out/arguments.json that `command` with `arguments` made out (keeping what it resolved so far)."""
    _store(out, {"command": command, "arguments": _plain(arguments), "resolved": _load(out).get("resolved", {})})


def check_arguments(out: Path, command: str, arguments: Mapping[str, Any]) -> None:
    """ResumeError unless `out` is a results directory that `command` made with these arguments (naming each one
    that differs, with the value out was made with)."""
    if not out.is_dir():
        raise ResumeError(f"--resume {out}: no such directory")
    stored = _load(out)
    if not stored:
        raise ResumeError(f"{out} has no {ARGUMENTS}: not a results directory of {command} (or one made before "
                          "resuming existed), nothing to check a resume against")
    if stored.get("command") != command:
        raise ResumeError(f"{out} was made by {stored.get('command')}, not {command}: refusing to resume it")
    given, was = _plain(arguments), stored.get("arguments", {})
    differ = [f"--{k.replace('_', '-')} {_show(was.get(k))} (this command: {_show(given.get(k))})"
              for k in sorted(set(given) | set(was)) if given.get(k) != was.get(k)]
    if differ:
        raise ResumeError(f"refusing to resume {out}: it was made with other arguments: {'; '.join(differ)}. Give "
                          "the same ones (or start a new study without --resume)")


def _show(v: Any) -> str:
    return "(not given)" if v is None else " ".join(map(str, v)) if isinstance(v, list) else str(v)


def resolve(out: Path, name: str, value: Any) -> None:
    """Keep a value the study resolved (a calibrated link rate), so that a resume uses it instead of resolving
    again (the rows before and after the interruption then share it)."""
    state = _load(out)
    state.setdefault("resolved", {})[name] = value
    _store(out, state)


def made_with(out: Path) -> dict[str, Any]:
    """The arguments out/arguments.json records (empty if it has none)."""
    return dict(_load(out).get("arguments", {}))


def resolved(out: Path) -> dict[str, Any]:
    """The values out's study resolved (`resolve`)."""
    return dict(_load(out).get("resolved", {}))


def run_name(out: Path) -> str | None:
    """The study's name in a results directory's name, <name>-<UTC timestamp>[-k] (experiments.rows.results_dir)."""
    m = re.fullmatch(r"(.+)-\d{8}-\d{6}(?:-\d+)?", out.name)
    return m.group(1) if m else None
