"""Scenario files (parsing, validation with errors that name the file and key), the sweep's result directories and
the report on synthetic rows; every shipped scenario parses."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from experiments.report import summary_markdown, theory_time_s, write_report
from experiments.rows import Row, results_dir
from experiments.scenario import RunPoint, ScenarioError, load_scenario
from tests.paths import ROOT

SHIPPED = sorted((ROOT / "experiments" / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_scenarios_parse(path: Path) -> None:
    sc = load_scenario(path)
    assert sc.name == path.stem and sc.runs() and sc.bw_mbps


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


def test_full_scenario_and_its_runs(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, """
[scenario]
name = "x-1"
repetitions = 2
[network]
bw_mbps = 10
cpus = "shared"
[sweep]
protocols = ["switchml", "ring"]
workers = [2, 4]
sizes_kib = [1, 4]
loss = [0, 0.01]
[report]
x = "loss"
"""))
    assert (sc.name, sc.repetitions, sc.bw_mbps, sc.sizes, sc.x) == ("x-1", 2, 10.0, (256, 1024), "loss")
    assert sc.cpus == "shared" and load_scenario(write(tmp_path, "[sweep]\nworkers = [2]\n")).cpus == "split"
    runs = sc.runs()
    assert len(runs) == 2 * 2 * 2 * 2
    assert runs[0] == RunPoint("switchml", 2, 256, 0.0, 0.0, 0.0) and runs[1].protocol == "ring"  # protocols interleave


@pytest.mark.parametrize("text, message", [
    ("[sweep]\nalgo = ['ring']\n", "s.toml: sweep.algo: unknown key (expected one of"),
    ("[sweeps]\n", "s.toml: sweeps: unknown section"),
    ("[sweep]\nalgos = ['nccl']\n", "sweep.algos[0]: expected one of atp, esa, omnireduce, ps, release, ring, switchml"),
    ("[sweep]\nprotocols = ['nccl']\n", "sweep.protocols[0]: expected one of atp, esa, omnireduce, ps, release, ring, switchml"),
    ("[sweep]\nprotocols = ['ring']\nalgos = ['ring']\n", "give protocols (or its old name algos), not both"),
    ("[sweep]\nworkers = [2, 64]\n", "sweep.workers[1]: 64 out of range [1, 32]"),
    ("[sweep]\nworkers = 2.5\n", "sweep.workers: expected an integer, got 2.5"),
    ("[sweep]\nloss = [0.0, 0.0]\n", "sweep.loss: repeated values"),
    ("[sweep]\nsizes = [1]\nsizes_kib = [1]\n", "give sizes (elements) or sizes_kib, not both"),
    ("[network]\nbw_mbps = 'fast'\n", "network.bw_mbps: expected a number, got 'fast'"),
    ("[network]\ncpus = 'half'\n", "network.cpus: expected one of split, shared, got 'half'"),
    ("[scenario]\nrepetitions = 0\n", "scenario.repetitions: 0 out of range [1, 1000]"),
    ("[report]\nx = 'time'\n", "report.x: expected one of size, workers"),
    ("[sweep\n", "s.toml: not valid TOML"),
])
def test_bad_scenarios_name_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        load_scenario(write(tmp_path, text))
    assert message in str(exc.value)
    assert str(exc.value).startswith(str(tmp_path / "s.toml"))


def test_results_directories_are_never_reused(tmp_path: Path) -> None:
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    a = results_dir(tmp_path, "s", now)
    b = results_dir(tmp_path, "s", now)
    assert a.name == "s-20260102-030405" and b.name == "s-20260102-030405-2" and a.is_dir() and b.is_dir()


def _row(protocol: str, n: int, size: int, t: float, rep: int, ok: bool = True, bound: str = "network") -> Row:
    return Row(protocol=protocol, workers=n, size=size, loss=0.0, straggler_ms=0.0, background_mbps=0.0, rep=rep,
               dtype="float32", bw_mbps=10.0, verified=ok, elapsed_s=t, goodput_elems_per_s=size / t if ok else 0,
               link_utilisation=None, retransmissions=0, wire_frames=1, wire_bytes=1, max_error_over_bound=0.5,
               worker_cpu_s=0.1, switch_aggregated=0, bound=bound, error="" if ok else "rank 1: exit 2: boom")


def test_report_medians_ratios_theory_and_plots(tmp_path: Path) -> None:
    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nalgos = ['switchml', 'ring']\n"
                                       "workers = [4]\nsizes = [65536, 262144]\n"))
    rows = [_row("switchml", 4, 262144, t, i) for i, t in enumerate((1.0, 2.0, 3.0))]
    rows += [_row("ring", 4, 262144, t, i) for i, t in enumerate((4.0, 5.0, 6.0))]
    rows += [_row("switchml", 4, 65536, 0.5, 0), _row("ring", 4, 65536, 0.4, 0), _row("ring", 4, 65536, 9.0, 1, False)]
    text = summary_markdown(sc, rows, {"CPU": "test cpu"})
    assert "- CPU: test cpu" in text
    assert "| 4 | 1 MiB | 2.0000 (1.0000–3.0000) | 5.0000 (4.0000–6.0000) |" in text
    assert "- switchml / ring time at 4 workers, 1 MiB: 0.40×" in text
    assert "- switchml / ring time at 4 workers, 256 KiB: 1.25×" in text
    assert "## Failed runs (1)" in text and "boom" in text
    assert "min–max bars, dashed: theory at the link rate)" in text  # a size sweep on rate-limited links draws it
    workers = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nprotocols = ['switchml', 'ring']\n"
                                            "workers = [2, 4]\nsizes = [65536]\n[report]\nx = 'workers'\n"))
    assert "(median time, min–max bars), `goodput.png`" in summary_markdown(workers, rows, {})  # issue 26: no dashes
    th = theory_time_s("ring", 262144, 4, 10.0)
    assert th == pytest.approx(1.5 * 262144 * 32 / 10e6)
    assert f"- ring, 4 workers, 1 MiB: {th:.3f} s; measured 5.000 s" in text
    write_report(sc, rows, tmp_path, {"CPU": "test"})
    for name in ("summary.md", "time.png", "goodput.png"):
        assert (tmp_path / name).stat().st_size > 1000
    assert Row.from_csv({k: str(v) for k, v in rows[0].csv_row().items()}) == rows[0]


def test_the_docs_name_every_runs_csv_column() -> None:
    """docs/experiments.md's runs.csv table lists exactly the columns a sweep writes, in order."""
    from experiments.rows import CSV_FIELDS

    text = (ROOT / "docs" / "experiments.md").read_text()
    table = text[text.index("Columns of a sweep's `runs.csv`"):text.index("`make multitenant`'s rows")]
    documented = tuple(re.findall(r"^\| `([a-z_]+)` \|", table, re.M))
    assert documented == CSV_FIELDS


def test_plots_start_at_zero_and_draw_the_link_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: a linear axis that did not start at 0 made a small drop look like a collapse; goodput plots had no
    link-rate line; ticks were raw 6-digit numbers."""
    import matplotlib.pyplot as plt

    from experiments import report

    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nalgos = ['switchml', 'ring']\n"
                                       "workers = [2, 4]\nsizes = [65536]\n[report]\nx = 'workers'\n"))
    rows = [_row(a, n, 65536, t, 1) for a, t in (("switchml", 0.30), ("ring", 0.31)) for n in (2, 4)]
    kept: list = []
    monkeypatch.setattr(report.plt, "close", kept.append)
    report.plot(sc, rows, tmp_path)
    time_fig, goodput_fig = kept
    for fig in kept:
        ax = fig.axes[0]
        assert ax.get_ylim()[0] == 0
        assert ax.yaxis.get_major_formatter().__class__.__name__ == "EngFormatter"
    lines = [ln for ln in goodput_fig.axes[0].get_lines() if ln.get_linestyle() == ":"]
    assert len(lines) == 1 and list(lines[0].get_ydata()) == [10e6 / 32, 10e6 / 32]
    assert not [ln for ln in time_fig.axes[0].get_lines() if ln.get_linestyle() == ":"]
    monkeypatch.undo()
    for fig in kept:
        plt.close(fig)


def test_ratios_come_from_network_bound_runs_only(tmp_path: Path) -> None:
    """Issue 28: a ratio is quoted only where the network set the pace on both sides; other points are listed apart
    with what bound them."""
    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nalgos = ['switchml', 'ring']\n"
                                       "workers = [4]\nsizes = [256, 262144]\n"))
    rows = [_row("switchml", 4, 262144, 1.0, k) for k in (1, 2)] + [_row("ring", 4, 262144, 2.0, k) for k in (1, 2)]
    rows += [_row("switchml", 4, 256, 0.01, k, bound="latency") for k in (1, 2)]
    rows += [_row("ring", 4, 256, 0.02, 1, bound="host-cpu"), _row("ring", 4, 256, 0.02, 2)]
    text = summary_markdown(sc, rows, {})
    assert "- switchml / ring time at 4 workers, 1 MiB: 0.50×" in text
    assert "time at 4 workers, 1 KiB" not in text
    assert ("- switchml / ring at 4 workers, 1 KiB: 0.50× over all runs, but switchml's were bound by latency 2/2 "
            "and ring's by host-cpu 1/2, network 1/2") in text


def test_points_not_bound_by_the_network_are_drawn_hollow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import matplotlib.pyplot as plt

    from experiments import report

    sc = load_scenario(write(tmp_path, "[network]\nbw_mbps = 10\n[sweep]\nalgos = ['switchml', 'ring']\n"
                                       "workers = [4]\nsizes = [256, 262144]\n"))
    rows = [_row("switchml", 4, 262144, 1.0, 1), _row("ring", 4, 262144, 2.0, 1),
            _row("switchml", 4, 256, 0.01, 1, bound="latency"), _row("ring", 4, 256, 0.02, 1)]
    kept: list = []
    monkeypatch.setattr(report.plt, "close", kept.append)
    report.plot(sc, rows, tmp_path)
    monkeypatch.undo()
    ax = kept[0].axes[0]
    hollow = [ln for ln in ax.get_lines() if ln.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and list(hollow[0].get_xdata()) == [256 * 4]  # switchml's 1 KiB point only
    assert "hollow: not network-bound" in [t.get_text() for t in ax.get_legend().get_texts()]
    for fig in kept:
        plt.close(fig)
