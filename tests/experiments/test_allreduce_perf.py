"""`python -m experiments.allreduce_perf`: nccl-tests' all_reduce_perf columns, for every algorithm (Mininet, root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.allreduce_perf import main, parse_size, sizes
from experiments.bound import VERDICTS


def test_sizes_follow_nccl_tests() -> None:
    assert [parse_size(t) for t in ("8", "4K", "16M", "1G", "2KB")] == [8, 4096, 16 << 20, 1 << 30, 2048]
    assert sizes(4096, 1 << 20, 4) == [4096, 16384, 65536, 262144, 1048576]
    assert sizes(6, 6, 2) == [4]  # whole elements
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def parse(out: str) -> tuple[list[list[str]], dict[str, str]]:
    """Data rows as nccl-tests' parsers split them (whitespace, '#' lines skipped), and the footer's values."""
    rows = [line.split() for line in out.splitlines() if line.strip() and not line.startswith("#")]
    footer = {k.strip("# ").strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines()
                                                                 if line.startswith("# Out of") or
                                                                 line.startswith("# Avg bus"))}
    return rows, footer


@pytest.mark.mininet
@pytest.mark.parametrize("protocol", ["switchml", "ring", "ps", "atp"])
def test_every_algorithm_in_nccl_tests_columns(protocol: str, program_dir: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--protocol", protocol, "--workers", "4", "-b", "4K", "-e", "16K", "-f", "4", "-n", "1", "-w", "0",
                 "--bw", "50", "--program-dir", str(program_dir), "--run-dir", str(tmp_path / "run"),
                 "-F", str(tmp_path / "perf.csv")])
    out = capsys.readouterr().out
    assert code == 0, out
    rows, footer = parse(out)
    assert [int(r[0]) for r in rows] == [4096, 16384]
    for r in rows:
        size, count, dtype, redop, root, time_us, algbw, busbw, wrong = r[:9]
        assert (int(count), dtype, redop, int(root), int(wrong)) == (int(size) // 4, "float", "sum", -1, 0)
        assert float(algbw) == pytest.approx(int(size) / float(time_us) / 1e3, rel=1e-3, abs=2e-6)
        assert float(busbw) == pytest.approx(float(algbw) * 2 * 3 / 4, rel=1e-3, abs=2e-6)
        assert r[11] in VERDICTS
    assert footer == {"Out of bounds values": "0 OK", "Avg bus bandwidth": footer["Avg bus bandwidth"]}
    assert float(footer["Avg bus bandwidth"]) > 0
    assert (tmp_path / "perf.csv").read_text().splitlines()[0].startswith("size_bytes,count,type,redop,root,time_us")
