"""Another version of this project to benchmark against: a checkout directory, or a git revision exported for a run.

`checkout(spec)` yields the version `spec` names: an existing directory as it is (another clone or work tree), or
else a revision of this repository (`355f392`, `main~3`, a tag) written by `git archive` into a temporary directory
that is deleted afterwards. Exporting leaves the repository alone (no work tree registered, nothing checked out), so
an interrupted benchmark leaves nothing behind but a temporary directory.
"""

from __future__ import annotations

import contextlib
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CheckoutError", "Version", "checkout"]

REPO = Path(__file__).resolve().parent.parent


class CheckoutError(RuntimeError):
    """The spec names no directory and no revision of the repository (or exporting it failed); the message says so."""


@dataclass(frozen=True)
class Version:
    """A version of the project on disk and how reports name it."""

    path: Path
    label: str
    """The directory and its commit when it is a work tree, or the revision and its commit when exported."""


def _git(repo: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *argv], capture_output=True, timeout=timeout)


def _commit_label(repo: Path, rev: str) -> str:
    r = _git(repo, "log", "-1", "--format=%h %cs", rev)
    return r.stdout.decode().strip() if r.returncode == 0 else ""


@contextlib.contextmanager
def checkout(spec: str | Path, repo: Path = REPO) -> Iterator[Version]:
    """The version `spec` names (a directory, or a revision of `repo` exported until the block ends)."""
    path = Path(spec)
    if path.is_dir():
        commit = _commit_label(path, "HEAD")
        yield Version(path.resolve(), f"{path.resolve()} (commit {commit})" if commit else str(path.resolve()))
        return
    try:
        r = _git(repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CheckoutError(f"{spec}: not a directory, and git cannot resolve revisions here ({exc})") from None
    if r.returncode != 0:
        raise CheckoutError(f"{spec}: neither a directory nor a revision of {repo} (a shallow clone lacks older "
                            "commits: `git fetch --unshallow`)")
    sha = r.stdout.decode().strip()
    with tempfile.TemporaryDirectory(prefix="ina-version-") as tmp:
        archive = Path(tmp) / "tree.tar"
        with open(archive, "wb") as f:
            done = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", sha], stdout=f,
                                  stderr=subprocess.PIPE, timeout=300)
        if done.returncode != 0:
            raise CheckoutError(f"{spec}: git archive failed: {done.stderr.decode().strip()[-300:]}")
        tree = Path(tmp) / "tree"
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 (and 3.12): no links or paths leaving `tree`
                tar.extractall(tree, filter="data")
            else:  # our own repository's archive
                tar.extractall(tree)
        archive.unlink()
        yield Version(tree, f"{spec} (commit {_commit_label(repo, sha)}, exported)")
