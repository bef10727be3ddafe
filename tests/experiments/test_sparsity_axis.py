"""The sparsity and overlap axes: scenario files sweep them, every engine runs them on identical tensors (the
worker's `--sparsity` and `--sparse-overlap`, the simulator's inputs), runs.csv keeps them and an older runs.csv
without them reads as dense and independent. No root, no network."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import experiments.sweep as sweep
from experiments.config import ExperimentConfig
from experiments.report import summary_markdown
from experiments.resume import SWEEP_DEFAULTS, SWEEP_KEY, read_rows, reopen, row_key, sweep_key
from experiments.rows import CSV_FIELDS, CsvLog, Row
from experiments.scenario import AXES, RunPoint, ScenarioError, load_scenario
from experiments.session import _worker_argv
from experiments.simulate import point_inputs, run_point
from experiments.validate import _label, _point
from tests.paths import ROOT
from topo.cpus import CpuLayout
from worker.launch import worker_argv
from worker.stats import RunResult, Stats
from worker.verify import SPARSE_BLOCK, rank_input

SIM = """
[scenario]
repetitions = 1
seed = 3
[network]
engine = "sim"
bw_mbps = 10000
[sweep]
protocols = ["switchml", "ring"]
workers = [2]
sizes = [4096]
dtype = "int32"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def zero_blocks(x: np.ndarray) -> int:
    return int((x.reshape(-1, SPARSE_BLOCK) == 0).all(axis=1).sum())


def zero_mask(x: np.ndarray) -> np.ndarray:
    return (x.reshape(-1, SPARSE_BLOCK) == 0).all(axis=1)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_overlap_0_is_the_input_without_it(dtype: str) -> None:
    for rank in range(3):
        plain = rank_input(5000, 7, rank, dtype, 0.7)
        assert np.array_equal(rank_input(5000, 7, rank, dtype, 0.7, overlap=0.0), plain)
        assert np.array_equal(rank_input(5000, 7, rank, dtype, 0.7, SPARSE_BLOCK, 0.0), plain)  # positional too
    assert np.array_equal(rank_input(5000, 7, 1, dtype, 0.0, overlap=0.8), rank_input(5000, 7, 1, dtype))  # dense


def test_overlap_1_gives_every_rank_the_same_zero_blocks() -> None:
    inputs = [rank_input(64 * 500, 3, r, "int32", 0.6, overlap=1.0) for r in range(4)]
    masks = [zero_mask(x) for x in inputs]
    assert 0 < masks[0].sum() < 500 and all(np.array_equal(m, masks[0]) for m in masks)
    own = [zero_mask(rank_input(64 * 500, 3, r, "int32", 0.6)) for r in range(2)]
    assert not np.array_equal(own[0], own[1])  # without overlap, each rank its own
    dense = rank_input(64 * 500, 3, 2, "int32")
    kept = inputs[2] != 0
    assert np.array_equal(inputs[2][kept], dense[kept])  # the non-zero values are the dense input's


def test_the_shared_draw_is_no_ranks_value_stream() -> None:
    """Seeded (seed, 2), the shared draw would be rank 2's int32 values: block k zero iff its element 2k+1 < 0."""
    n = 64 * 4000
    mask = zero_mask(rank_input(n, 9, 0, "int32", 0.5, overlap=1.0))
    negative = rank_input(n, 9, 2, "int32")[1:2 * mask.size:2] < 0
    assert 0.45 < (mask == negative).mean() < 0.55


@pytest.mark.parametrize("overlap", [0.0, 0.5, 0.9, 1.0])
def test_each_ranks_zero_fraction_stays_the_sparsity(overlap: float) -> None:
    blocks = 20_000
    inputs = [rank_input(SPARSE_BLOCK * blocks, 11, r, "float32", 0.3, overlap=overlap) for r in range(4)]
    for x in inputs:
        assert abs(zero_blocks(x) / blocks - 0.3) < 0.02
    all_zero = np.logical_and.reduce([zero_mask(x) for x in inputs]).mean()
    assert abs(all_zero - (overlap * 0.3 + (1 - overlap) * 0.3 ** 4)) < 0.02  # the union shrinks with the overlap


def test_rank_input_refuses_an_overlap_outside_0_to_1() -> None:
    with pytest.raises(ValueError, match="overlap"):
        rank_input(64, 1, 0, "float32", 0.5, overlap=1.5)


def test_the_loader_takes_sparsity_as_floats_in_0_to_1(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM + "sparsity = [0, 0.5, 1]\n[report]\nx = 'sparsity'\n"))
    assert sc.sparsity == (0.0, 0.5, 1.0) and all(type(v) is float for v in sc.sparsity) and sc.x == "sparsity"
    assert load_scenario(write(tmp_path, SIM)).sparsity == (0.0,)
    assert load_scenario(write(tmp_path, SIM + "sparsity = 0.9\n")).sparsity == (0.9,)
    assert "sparsity" in AXES


def test_the_loader_takes_overlap_as_floats_in_0_to_1(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM + "sparsity = [0.9]\noverlap = [0, 0.5, 1]\n[report]\nx = 'overlap'\n"))
    assert sc.overlap == (0.0, 0.5, 1.0) and all(type(v) is float for v in sc.overlap) and sc.x == "overlap"
    assert load_scenario(write(tmp_path, SIM)).overlap == (0.0,)
    assert "overlap" in AXES and AXES.index("overlap") == AXES.index("sparsity") + 1


@pytest.mark.parametrize("value, message", [
    ("[1.5]", "sweep.overlap[0]: 1.5 out of range [0, 1]"),
    ("[0.0, -0.1]", "sweep.overlap[1]: -0.1 out of range [0, 1]"),
    ("[0.5, 0.5]", "sweep.overlap: repeated values"),
])
def test_the_loader_refuses_bad_overlap(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(write(tmp_path, SIM + f"overlap = {value}\n"))
    assert message in str(exc.value) and str(exc.value).startswith(str(tmp_path / "s.toml"))


@pytest.mark.parametrize("value, message", [
    ("[1.5]", "sweep.sparsity[0]: 1.5 out of range [0, 1]"),
    ("[0.0, -0.1]", "sweep.sparsity[1]: -0.1 out of range [0, 1]"),
    ("['half']", "sweep.sparsity[0]: expected a number, got 'half'"),
    ("[true]", "sweep.sparsity[0]: expected a number, got True"),
    ("[0.5, 0.5]", "sweep.sparsity: repeated values"),
    ("[]", "sweep.sparsity: empty list"),
])
def test_the_loader_refuses_bad_sparsity(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(write(tmp_path, SIM + f"sparsity = {value}\n"))
    assert message in str(exc.value) and str(exc.value).startswith(str(tmp_path / "s.toml"))


def test_runs_cross_the_axis_protocols_innermost(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM.replace("sizes = [4096]", "sizes = [4096, 8192]")
                             + "sparsity = [0.0, 0.9]\n"))
    runs = sc.runs()
    assert len(runs) == 2 * 2 * 2
    assert [(p.size, p.sparsity, p.protocol) for p in runs[:4]] == [
        (4096, 0.0, "switchml"), (4096, 0.0, "ring"), (4096, 0.9, "switchml"), (4096, 0.9, "ring")]
    assert RunPoint("ring", 2, 4096, 0.0, 0.0, 0.0).sparsity == 0.0  # the points of older callers: dense
    assert runs[2].value("sparsity") == 0.9


def test_runs_cross_the_overlap_axis_inside_sparsity(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM + "sparsity = [0.5, 0.9]\noverlap = [0.0, 0.9]\n"))
    runs = sc.runs()
    assert len(runs) == 2 * 2 * 2
    assert [(p.sparsity, p.overlap, p.protocol) for p in runs[:4]] == [
        (0.5, 0.0, "switchml"), (0.5, 0.0, "ring"), (0.5, 0.9, "switchml"), (0.5, 0.9, "ring")]
    assert {(p.sparsity, p.overlap) for p in runs} == {(0.5, 0.0), (0.5, 0.9), (0.9, 0.0), (0.9, 0.9)}
    assert RunPoint("ring", 2, 4096, 0.0, 0.0, 0.0, 0.9).overlap == 0.0  # positional callers: sparsity, then overlap
    assert runs[2].value("overlap") == 0.9


def test_worker_argv_emits_sparsity_only_when_non_zero(tmp_path: Path) -> None:
    from worker.__main__ import build_parser

    job = tmp_path / "job.json"
    assert "--sparsity" not in worker_argv(job, 0, "switchml", 4096)
    assert "--sparsity" not in worker_argv(job, 0, "switchml", 4096, sparsity=0.0)
    argv = worker_argv(job, 1, "omnireduce", 4096, sparsity=0.123456789)
    assert argv[argv.index("--sparsity") + 1] == "0.123456789"  # exact: the same blocks as the simulator's
    assert build_parser().parse_args(argv[3:]).sparsity == 0.123456789
    cfg = ExperimentConfig(protocol="omnireduce", sparsity=0.9)
    got = build_parser().parse_args(_worker_argv(cfg, job, 0, None, CpuLayout())[3:])
    assert got.sparsity == 0.9 and got.protocol == "omnireduce"
    assert "--sparsity" not in _worker_argv(replace(cfg, sparsity=0.0), job, 0, None, CpuLayout())
    with pytest.raises(ValueError, match="sparsity"):
        replace(cfg, sparsity=1.5).check()


def test_worker_argv_emits_sparse_overlap_only_when_non_zero(tmp_path: Path) -> None:
    from worker.__main__ import build_parser

    job = tmp_path / "job.json"
    assert "--sparse-overlap" not in worker_argv(job, 0, "omnireduce", 4096, sparsity=0.9)
    assert "--sparse-overlap" not in worker_argv(job, 0, "omnireduce", 4096, sparsity=0.9, sparse_overlap=0.0)
    argv = worker_argv(job, 1, "omnireduce", 4096, sparsity=0.9, sparse_overlap=0.123456789)
    assert argv[argv.index("--sparse-overlap") + 1] == "0.123456789"
    got = build_parser().parse_args(argv[3:])
    assert (got.sparsity, got.sparse_overlap) == (0.9, 0.123456789)
    assert build_parser().parse_args(worker_argv(job, 1, "omnireduce", 4096)[3:]).sparse_overlap == 0.0
    cfg = ExperimentConfig(protocol="omnireduce", sparsity=0.9, sparse_overlap=0.5)
    assert build_parser().parse_args(_worker_argv(cfg, job, 0, None, CpuLayout())[3:]).sparse_overlap == 0.5
    assert "--sparse-overlap" not in _worker_argv(replace(cfg, sparse_overlap=0.0), job, 0, None, CpuLayout())
    with pytest.raises(ValueError, match="sparse_overlap"):
        replace(cfg, sparse_overlap=1.5).check()
    with pytest.raises(ValueError, match="sparse_overlap"):
        replace(cfg, sparse_overlap=-0.1).check()


def test_the_worker_cli_draws_its_input_and_the_references_sparse(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import worker.__main__ as cli
    from tests.worker.ina_fixtures import LAYOUT_JSON, make_job

    path = tmp_path / "job.json"
    make_job(3, ip_prefix="198.51.100").save(path)
    seen: dict[str, Any] = {}

    class Fake:
        def run(self, data: np.ndarray, dtype: str) -> RunResult:
            seen["data"] = data
            return RunResult(array=data, stats=Stats(elements=data.size, elapsed=1.0), exponents=None)

        def verify(self, run: RunResult, inputs: list[np.ndarray], dtype: str) -> Any:
            seen["inputs"] = inputs
            from worker.verify import Verdict
            return Verdict(True, 0.0, 0.0, "ok")

    monkeypatch.setattr(cli, "open_collective", lambda *a: contextlib.nullcontext(Fake()))
    base = ["--job", str(path), "--rank", "1", "--program-json", str(LAYOUT_JSON), "--size", "4096",
            "--dtype", "int32", "--seed", "5", "--verify", "--json"]
    assert cli.main([*base, "--sparsity", "0.9"]) == cli.EXIT_OK
    assert zero_blocks(seen["data"]) > 32 and len(seen["inputs"]) == 3
    assert np.array_equal(seen["inputs"][1], seen["data"])
    assert all(zero_blocks(x) > 32 for x in seen["inputs"])
    assert cli.main(base) == cli.EXIT_OK and zero_blocks(seen["data"]) == 0  # default: dense
    assert cli.main([*base, "--sparsity", "0.5", "--sparse-overlap", "1"]) == cli.EXIT_OK
    assert np.array_equal(seen["inputs"][1], seen["data"]) and 0 < zero_blocks(seen["data"]) < 64
    assert all(np.array_equal(zero_mask(x), zero_mask(seen["data"])) for x in seen["inputs"])
    with pytest.raises(SystemExit) as exc:
        cli.main([*base, "--sparsity", "0.5", "--sparse-overlap", "1.5"])
    assert exc.value.code == cli.EXIT_CONFIG
    with pytest.raises(SystemExit) as exc:
        cli.main([*base, "--sparsity", "1.5"])
    assert exc.value.code == cli.EXIT_CONFIG


def _sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sweep_keys: str) -> tuple[list, list, list, list]:
    """A one-protocol Mininet sweep whose network only records each run's config: (configs, rows, CSV header, CSV
    rows)."""
    sc = load_scenario(write(tmp_path, "[scenario]\nrepetitions = 1\n[sweep]\nprotocols = ['switchml']\nworkers = [2]\n"
                                       "sizes = [256]\n" + sweep_keys))
    ran: list[ExperimentConfig] = []

    class Net:
        def run(self, cfg: ExperimentConfig, background: object) -> None:
            ran.append(cfg)
            raise RuntimeError("no network here")

        def close(self) -> None:
            pass

    monkeypatch.setattr(sweep, "open_network", lambda cfg, log: Net())
    for name in ("p.json", "p.p4info.txt"):
        (tmp_path / name).write_text("{}")
    rows = sweep.run_scenario(sc, tmp_path, program_json=tmp_path / "p.json", p4info=tmp_path / "p.p4info.txt",
                              progress=False)
    header, got = read_rows(tmp_path / "runs.csv")
    return ran, rows, header, got


def test_the_sweep_gives_each_run_its_points_sparsity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran, rows, header, got = _sweep(tmp_path, monkeypatch, "sparsity = [0.0, 0.9]\n")
    assert [c.sparsity for c in ran] == [0.0, 0.9] and [r.sparsity for r in rows] == [0.0, 0.9]
    assert "sparsity" in header and header == list(CSV_FIELDS) and [r["sparsity"] for r in got] == ["0.0", "0.9"]


def test_the_sweep_gives_each_run_its_points_overlap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran, rows, header, got = _sweep(tmp_path, monkeypatch, "sparsity = [0.9]\noverlap = [0.0, 0.5]\n")
    assert [(c.sparsity, c.sparse_overlap) for c in ran] == [(0.9, 0.0), (0.9, 0.5)]
    assert [r.overlap for r in rows] == [0.0, 0.5]
    assert header.index("overlap") == header.index("sparsity") + 1 and [r["overlap"] for r in got] == ["0.0", "0.5"]


def test_the_simulators_inputs_have_zero_blocks_and_its_run_verifies(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM.replace('["switchml", "ring"]', '["omnireduce"]') + "sparsity = [0.9]\n"))
    point = sc.runs()[0]
    assert point.sparsity == 0.9
    inputs = point_inputs(sc, point, 4)
    assert len(inputs) == 2 and all(zero_blocks(x) > 32 for x in inputs)
    dense = point_inputs(sc, replace(point, sparsity=0.0), 4)
    assert all(zero_blocks(x) == 0 for x in dense)
    kept = inputs[0] != 0
    assert np.array_equal(inputs[0][kept], dense[0][kept])  # the non-zero values are the dense input's
    row = run_point(sc, point, 1)
    assert row.verified, row.error
    assert row.sparsity == 0.9 and row.csv_row()["sparsity"] == 0.9


def test_the_simulators_inputs_share_their_zero_blocks_and_its_run_verifies(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, SIM.replace('["switchml", "ring"]', '["omnireduce"]')
                             + "sparsity = [0.5]\noverlap = [1.0]\n"))
    point = sc.runs()[0]
    assert point.overlap == 1.0
    inputs = point_inputs(sc, point, 4)
    assert np.array_equal(zero_mask(inputs[0]), zero_mask(inputs[1])) and 0 < zero_blocks(inputs[0]) < 64
    own = point_inputs(sc, replace(point, overlap=0.0), 4)
    assert all(np.array_equal(a, rank_input(4096, 4, r, "int32", 0.5)) for r, a in enumerate(own))
    row = run_point(sc, point, 1)
    assert row.verified, row.error
    assert row.overlap == 1.0 and row.csv_row()["overlap"] == 1.0


def test_an_older_runs_csv_without_the_column_reads_and_resumes_as_dense(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, "[scenario]\nrepetitions = 1\n[sweep]\nprotocols = ['switchml', 'ring']\n"
                                       "workers = [2]\nsizes = [256]\n"))
    p1, p2 = sc.runs()
    runs = tmp_path / "runs.csv"
    log = CsvLog(runs, [c for c in CSV_FIELDS if c != "sparsity"])
    log.append(replace(Row.failed(p1, 1, sc, ""), verified=True, elapsed_s=0.5).csv_row())
    log.append(Row.failed(p2, 1, sc, "boom").csv_row())
    old = read_rows(runs)[1]
    assert Row.from_csv(old[0]).sparsity == 0.0 and _point(Row.from_csv(old[0])) == p1
    kept = reopen(runs, CSV_FIELDS, SWEEP_KEY, sweep.verified, normalize=lambda d: Row.from_csv(d).csv_row(),
                  defaults=SWEEP_DEFAULTS)
    assert kept.done == {sweep_key(p1, 1, sc)} and kept.retried == 1
    header, rows = read_rows(runs)
    assert header == list(CSV_FIELDS) and [r["sparsity"] for r in rows] == ["0.0"]
    assert row_key(rows[0], SWEEP_KEY) == sweep_key(p1, 1, sc)


def test_an_older_runs_csv_without_the_overlap_column_resumes_as_independent(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, "[scenario]\nrepetitions = 1\n[sweep]\nprotocols = ['switchml', 'ring']\n"
                                       "workers = [2]\nsizes = [256]\nsparsity = [0.9]\n"))
    p1, p2 = sc.runs()
    runs = tmp_path / "runs.csv"
    log = CsvLog(runs, [c for c in CSV_FIELDS if c != "overlap"])
    log.append(replace(Row.failed(p1, 1, sc, ""), verified=True, elapsed_s=0.5).csv_row())
    log.append(Row.failed(p2, 1, sc, "boom").csv_row())
    assert Row.from_csv(read_rows(runs)[1][0]).overlap == 0.0
    kept = reopen(runs, CSV_FIELDS, SWEEP_KEY, sweep.verified, normalize=lambda d: Row.from_csv(d).csv_row(),
                  defaults=SWEEP_DEFAULTS)
    assert kept.done == {sweep_key(p1, 1, sc)} and kept.retried == 1
    header, rows = read_rows(runs)
    assert header == list(CSV_FIELDS) and [(r["sparsity"], r["overlap"]) for r in rows] == [("0.9", "0.0")]
    assert "overlap" in SWEEP_KEY and SWEEP_DEFAULTS["overlap"] == "0.0"


def test_the_report_and_the_validation_name_the_sparsity(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nprotocols = ['omnireduce', 'ring']\n"
                                       "workers = [4]\nsizes = [65536]\nsparsity = [0.0, 0.9]\n[report]\n"
                                       "x = 'sparsity'\n"))
    rows = [replace(Row.failed(p, 1, sc, ""), verified=True, elapsed_s=t, bound="network")
            for p, t in zip(sc.runs(), (1.0, 2.0, 0.25, 2.0))]
    text = summary_markdown(sc, rows, {})
    assert "| 4 | 90 % | 0.2500 (0.2500–0.2500) | 2.0000 (2.0000–2.0000) |" in text
    assert "- omnireduce / ring time at 4 workers, 90 %: 0.12×" in text
    assert "sparsity [0.0, 0.9]" in text
    by_size = replace(sc, x="size")
    assert "omnireduce sparsity=90 %" in summary_markdown(by_size, rows, {})  # another axis's facet
    assert _label(sc.runs()[2]) == "omnireduce n=4 65536 elems sparsity 0.9"
    assert _label(sc.runs()[0]) == "omnireduce n=4 65536 elems"
    assert "overlap" not in text


def test_the_report_and_the_validation_name_the_overlap(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nprotocols = ['omnireduce', 'ring']\n"
                                       "workers = [4]\nsizes = [65536]\nsparsity = [0.9]\noverlap = [0.0, 0.9]\n"
                                       "[report]\nx = 'overlap'\n"))
    rows = [replace(Row.failed(p, 1, sc, ""), verified=True, elapsed_s=t, bound="network")
            for p, t in zip(sc.runs(), (0.5, 2.0, 0.25, 2.0))]
    text = summary_markdown(sc, rows, {})
    assert "| workers | fraction of blocks whose zero/non-zero draw all workers share | omnireduce | ring |" in text
    assert "| 4 | 90 % | 0.2500 (0.2500–0.2500) | 2.0000 (2.0000–2.0000) |" in text
    assert "overlap [0.0, 0.9] (the fraction of blocks whose zero/non-zero draw all workers share)" in text
    assert "omnireduce overlap=90 %" in summary_markdown(replace(sc, x="sparsity"), rows, {})  # a facet elsewhere
    assert _label(sc.runs()[2]) == "omnireduce n=4 65536 elems sparsity 0.9 overlap 0.9"
    assert _label(sc.runs()[0]) == "omnireduce n=4 65536 elems sparsity 0.9"
    assert _point(rows[2]) == sc.runs()[2]


def test_the_shipped_sparsity_scenario() -> None:
    sc = load_scenario(ROOT / "experiments" / "scenarios" / "sparsity.toml")
    assert sc.engine == "sim" and sc.protocols == ("switchml", "omnireduce", "ring")
    assert sc.sparsity == (0.0, 0.5, 0.9, 0.99) and sc.workers == (4,) and sc.sizes == (1 << 18,)
    assert sc.overlap == (0.0, 0.9) and sc.x == "sparsity" and len(sc.runs()) == 24
    mininet = load_scenario(ROOT / "experiments" / "scenarios" / "sparsity-mininet.toml")
    assert mininet.engine == "mininet" and mininet.overlap == (0.0, 0.9) and len(mininet.runs()) == 24
