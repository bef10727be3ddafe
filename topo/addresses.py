"""The testbed's addresses, in every network alike (Mininet or in process): the switch's service address, the
hosts' (hI is 10.0.0.I with MAC 00:00:0a:00:00:II for I < 254; beyond, see `host_ip`) and the workers' UDP port."""

from __future__ import annotations

from worker.job import SwitchAddress

__all__ = ["SWITCH", "SWITCH_IP", "SWITCH_MAC", "WORKER_UDP_PORT", "host_index", "host_ip", "host_mac", "rack_address"]

SWITCH_IP = "10.0.0.254"
SWITCH_MAC = "00:00:0a:00:00:fe"
SWITCH = SwitchAddress(ip=SWITCH_IP, mac=SWITCH_MAC)
"""Where workers send INA packets and results come from."""
WORKER_UDP_PORT = 50000


_SKIPPED = 2
"""Host numbers 254 and 255 of 10.0.0.0/24: the switch's service address and the /24's broadcast address."""


def _host_number(i: int) -> int:
    """The 16-bit host number k of host h<i> under 10.0.0.0/16: i below 254, i + 2 from there on."""
    if i < 0:
        raise ValueError(f"host index must not be negative, got {i}")
    k = i if i < 254 else i + _SKIPPED
    if k > 0xFFFF:
        raise ValueError(f"host index {i} is beyond 10.0.0.0/16")
    return k


def host_ip(i: int) -> str:
    """IPv4 address of host h<i>: 10.0.0.i for i < 254; beyond, 10.0.{k >> 8}.{k & 255} with k = i + 2, which skips
    the switch's address (10.0.0.254) and 10.0.0.255."""
    k = _host_number(i)
    return f"10.0.{k >> 8}.{k & 255}"


def host_mac(i: int) -> str:
    """MAC address of host h<i>: 00:00:0a:00:00:ii for i < 254; beyond, 00:00:0a:00:{k >> 8}:{k & 255} with k = i + 2
    (as for host_ip: never the switch's 00:00:0a:00:00:fe)."""
    k = _host_number(i)
    return f"00:00:0a:00:{k >> 8:02x}:{k & 255:02x}"


def host_index(ip: str) -> int:
    """The I of host hI, from its address (the inverse of host_ip, read from the last two octets)."""
    octets = ip.split(".")
    k = int(octets[2]) << 8 | int(octets[3])
    if k < 254:
        return k
    if k < 254 + _SKIPPED:
        raise ValueError(f"{ip} is not a host's address (10.0.0.254 is the switch's, 10.0.0.255 no one's)")
    return k - _SKIPPED


def rack_address(rack: int) -> tuple[str, str]:
    """(MAC, IPv4) of rack `rack`'s first-level switch, where a second level's ACKs for that rack are addressed when
    switches that forward by MAC lie between (a leaf–spine network): a locally administered MAC 02:00:0a:01:RR:RR and
    10.1.{rack >> 8}.{rack & 255}, outside every host's 10.0.0.0/16."""
    if not 0 <= rack <= 0xFFFF:
        raise ValueError(f"rack must be 0..65535, got {rack}")
    return f"02:00:0a:01:{rack >> 8:02x}:{rack & 255:02x}", f"10.1.{rack >> 8}.{rack & 255}"
