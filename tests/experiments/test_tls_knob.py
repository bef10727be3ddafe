"""`python -m experiments.run --tls [DIR]` (`make run TLS=1`): the knob reaches the network's config."""

from __future__ import annotations

from pathlib import Path

from experiments.config import ExperimentConfig
from experiments.run import _parser


def test_tls_flag() -> None:
    assert _parser().parse_args(["--tls"]).tls == ExperimentConfig().program_dir / "tls"
    assert _parser().parse_args(["--tls", "certs"]).tls == Path("certs")
    assert _parser().parse_args([]).tls is None
    assert ExperimentConfig(tls=Path("certs")).network.tls == Path("certs")
