"""Shared helpers of the worker tests (`tests.worker.ina_fixtures`)."""

from __future__ import annotations

from pathlib import Path

from worker.job import JobConfig

HERE = Path(__file__).resolve().parent
LAYOUT_JSON = HERE / "ina_layout.json"
"""Hand-written BMv2 JSON excerpt following the brief's INA layout (8 elements per packet, header stack payload)."""


def make_job(n: int, *, job_id: int = 7, num_elems: int = 8, base: int = 0, size: int = 16,
             ip_prefix: str = "10.0.0", port0: int = 50000) -> JobConfig:
    """A job with n workers at <ip_prefix>.1.. and UDP ports port0.. ."""
    return JobConfig.from_dict({
        "job_id": job_id,
        "num_elems": num_elems,
        "switch": {"ip": f"{ip_prefix}.254", "mac": "00:00:0a:00:00:fe"},
        "pool": {"base": base, "size": size},
        "workers": [
            {"rank": r, "ip": f"{ip_prefix}.{r + 1}", "mac": f"00:00:0a:00:00:{r + 1:02x}",
             "udp_port": port0 + r, "switch_port": r + 1}
            for r in range(n)
        ],
    })
