"""The testbed's addresses, in every network alike (Mininet or in process): the switch's service address, the
hosts' (hI is 10.0.0.I with MAC 00:00:0a:00:00:II) and the workers' UDP port."""

from __future__ import annotations

from worker.job import SwitchAddress

__all__ = ["SWITCH", "SWITCH_IP", "SWITCH_MAC", "WORKER_UDP_PORT", "host_index", "host_ip", "host_mac"]

SWITCH_IP = "10.0.0.254"
SWITCH_MAC = "00:00:0a:00:00:fe"
SWITCH = SwitchAddress(ip=SWITCH_IP, mac=SWITCH_MAC)
"""Where workers send INA packets and results come from."""
WORKER_UDP_PORT = 50000


def host_ip(i: int) -> str:
    """IPv4 address of host h<i>."""
    return f"10.0.0.{i}"


def host_mac(i: int) -> str:
    """MAC address of host h<i>."""
    return f"00:00:0a:00:00:{i:02x}"


def host_index(ip: str) -> int:
    """The I of host hI, from its address."""
    return int(ip.rsplit(".", 1)[1])
