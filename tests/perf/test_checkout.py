"""perf.checkout: the version a benchmark compares against, as a directory or as a git revision exported for the
run (and removed after it); a spec that names neither is one clear error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from perf.checkout import REPO, CheckoutError, checkout

IN_GIT = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
                        capture_output=True).returncode == 0


def test_a_directory_is_used_as_it_is(tmp_path: Path) -> None:
    with checkout(tmp_path) as version:
        assert version.path == tmp_path.resolve() and version.label == str(tmp_path.resolve())
    assert tmp_path.exists()


@pytest.mark.skipif(not IN_GIT, reason="not a git repository")
def test_a_revision_is_exported_for_the_block_and_removed_after() -> None:
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    with checkout("HEAD") as version:
        tree = version.path
        assert not (tree / ".git").exists()  # an export, not a work tree of the repository
        committed = subprocess.run(["git", "-C", str(REPO), "show", "HEAD:experiments/bench/allreduce.py"],
                                   capture_output=True, check=True).stdout
        assert (tree / "experiments" / "bench" / "allreduce.py").read_bytes() == committed
        assert (tree / "p4src" / "switchml.p4").exists()
        assert version.label.startswith(f"HEAD (commit {head} ") and version.label.endswith(", exported)")
    assert not tree.exists()
    worktrees = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert str(tree) not in worktrees


def test_a_spec_that_is_neither_a_directory_nor_a_revision_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CheckoutError, match=r"no-such-version-0x: neither a directory nor a revision of"):
        with checkout("no-such-version-0x", repo=REPO):
            pass
    with pytest.raises(CheckoutError, match="neither a directory nor a revision"):
        with checkout(str(tmp_path / "missing"), repo=tmp_path):  # not a repository at all
            pass


def test_a_checkout_of_either_layout_names_its_benchmark(tmp_path: Path) -> None:
    """BENCH_COMPARE reaches back to versions from before the house moved (topo/bench.py), e.g. 355f392."""
    from experiments.bench.compare import Checkout, CompareError

    (tmp_path / "p4src").mkdir()
    (tmp_path / "p4src" / "switchml.p4").write_text("")
    with pytest.raises(CompareError, match="is not a checkout of this project"):
        Checkout(tmp_path)
    (tmp_path / "topo").mkdir()
    (tmp_path / "topo" / "bench.py").write_text("")
    assert Checkout(tmp_path).bench_module == "topo.bench"
    assert Checkout(REPO).bench_module == "experiments.bench.allreduce"
