"""Frames hosts send: Ethernet/IPv4/UDP with a correct IPv4 checksum (the in-process network, the benchmarks, the
namespace tests), and what an IPv4 LPM router makes of a frame. Protocol headers come from each protocol's codec."""

from __future__ import annotations

import functools
import socket
import struct


def mac_bytes(mac: str) -> bytes:
    """"02:00:00:00:01:01" → 6 bytes."""
    return bytes.fromhex(mac.replace(":", ""))


def ip_bytes(ip: str) -> bytes:
    """"10.0.1.1" → 4 bytes."""
    return socket.inet_aton(ip)


def mac_int(mac: str) -> int:
    """A MAC address as an integer (a P4Runtime/engine match value)."""
    return int.from_bytes(mac_bytes(mac), "big")


def ip_int(ip: str) -> int:
    """An IPv4 address as an integer (a P4Runtime/engine match value)."""
    return int.from_bytes(ip_bytes(ip), "big")


def internet_checksum(data: bytes) -> int:
    """RFC 1071 checksum of `data` (an IPv4 header, or a TCP/UDP pseudo-header and segment) whose checksum field is
    zero: the ones' complement of the ones' complement sum of its 16-bit words."""
    if len(data) % 2:
        data += b"\0"
    s = int.from_bytes(data, "big") % 0xFFFF  # 2**16 = 1 (mod 0xFFFF): the end-around carry sum, 0xFFFF as 0
    if s == 0 and any(data):
        s = 0xFFFF
    return ~s & 0xFFFF


ipv4_checksum = internet_checksum
"""RFC 1071 checksum of an IPv4 header whose checksum field is zero."""


@functools.lru_cache(maxsize=1024)
def udp_headers(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, length: int,
                ttl: int = 64, ident: int = 0, dont_fragment: bool = False) -> bytes:
    """The Ethernet, IPv4 and UDP headers of a frame with a `length`-byte payload (cached: the same for every packet
    of a flow and size)."""
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + length, ident, 0x4000 if dont_fragment else 0, ttl, 17, 0,
                      ip_bytes(src_ip), ip_bytes(dst_ip))
    hdr = hdr[:10] + struct.pack("!H", ipv4_checksum(hdr)) + hdr[12:]
    return (mac_bytes(dst_mac) + mac_bytes(src_mac) + b"\x08\x00" + hdr
            + struct.pack("!HHHH", sport, dport, 8 + length, 0))


def udp_frame(dst_mac: str, src_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, payload: bytes,
              ttl: int = 64, ident: int = 0, dont_fragment: bool = False) -> bytes:
    """An Ethernet/IPv4/UDP frame with a correct IPv4 header checksum and a zero (absent) UDP checksum."""
    return udp_headers(dst_mac, src_mac, src_ip, dst_ip, sport, dport, len(payload), ttl, ident,
                       dont_fragment) + payload


def forwarded(frame: bytes, new_dst_mac: str) -> bytes:
    """What an IPv4 LPM router (p4lang tutorials' basic.p4 ipv4_forward) makes of `frame`: src MAC := old dst MAC,
    dst MAC := new_dst_mac, TTL - 1, IPv4 checksum recomputed."""
    ip = bytearray(frame[14:34])
    ip[8] -= 1
    ip[10:12] = b"\0\0"
    ip[10:12] = struct.pack("!H", ipv4_checksum(bytes(ip)))
    return mac_bytes(new_dst_mac) + frame[0:6] + frame[12:14] + bytes(ip) + frame[34:]
