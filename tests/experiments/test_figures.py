"""experiments.figures: a published figure carries the commit and command that produced it."""

from __future__ import annotations

import re
from pathlib import Path

from experiments.figures import FIGURES, Figure, provenance, publish


def test_every_figure_is_a_shipped_scenario() -> None:
    assert all(f.scenario.is_file() for f in FIGURES)


def test_a_published_summary_is_stamped_and_its_plots_copied(tmp_path: Path) -> None:
    run = tmp_path / "workers-sweep-20261127-000000"
    run.mkdir()
    (run / "summary.md").write_text("# workers-sweep\n\nGoodput vs workers.\n")
    (run / "time.png").write_bytes(b"\x89PNG time")
    (run / "goodput.png").write_bytes(b"\x89PNG goodput")
    stamp = provenance("make experiment SCENARIO=experiments/scenarios/workers-sweep.toml")
    assert re.match(r"Produced by `make experiment SCENARIO=experiments/scenarios/workers-sweep.toml` at commit "
                    r"[0-9a-f]{7,} \(\d{4}-\d\d-\d\d\)( with uncommitted changes)? on .+, \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$",
                    stamp), stamp
    dest = tmp_path / "readme"
    written = publish(Figure("workers-sweep", ("time", "goodput")), run, stamp, dest)
    assert [p.name for p in written] == ["workers-sweep-summary.md", "workers-sweep-time.png",
                                         "workers-sweep-goodput.png"]
    assert (dest / "workers-sweep-summary.md").read_text() == f"# workers-sweep\n\n{stamp}\n\nGoodput vs workers.\n"
    assert (dest / "workers-sweep-goodput.png").read_bytes() == b"\x89PNG goodput"


def test_the_stamp_counts_code_changes_not_the_figures_a_run_wrote(tmp_path: Path) -> None:
    """`make figures` writes results/readme/ as it goes: the later figures of the same run used to be stamped "with
    uncommitted changes" for the earlier ones."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                       capture_output=True)

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "fig.md").write_text("old")
    (tmp_path / "code.py").write_text("x = 1")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "c")
    (tmp_path / "results" / "fig.md").write_text("new")
    assert "uncommitted" not in provenance("cmd", tmp_path)
    (tmp_path / "code.py").write_text("x = 2")
    assert "with uncommitted changes" in provenance("cmd", tmp_path)
