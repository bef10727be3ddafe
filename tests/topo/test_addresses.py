"""topo.addresses: hosts' addresses past h253 skip the switch's (10.0.0.254) and 10.0.0.255, and host_index inverts
host_ip; the addresses of h1..h253 are those they always were."""

from __future__ import annotations

import pytest

from topo.addresses import SWITCH_IP, SWITCH_MAC, host_index, host_ip, host_mac


def test_hosts_below_254_keep_their_addresses() -> None:
    for i in range(1, 254):
        assert host_ip(i) == f"10.0.0.{i}"
        assert host_mac(i) == f"00:00:0a:00:00:{i:02x}"
        assert host_index(f"10.0.0.{i}") == i


def test_round_trip_and_no_host_on_the_switchs_address() -> None:
    ips = [host_ip(i) for i in range(1, 2001)]
    macs = [host_mac(i) for i in range(1, 2001)]
    assert [host_index(ip) for ip in ips] == list(range(1, 2001))
    assert len(set(ips)) == len(set(macs)) == 2000
    assert SWITCH_IP not in ips and SWITCH_MAC not in macs and "10.0.0.255" not in ips
    assert all(mac.startswith("00:00:0a:00:") and len(mac) == 17 for mac in macs)
    # the MAC carries the same host number as the IP's last two octets
    for ip, mac in zip(ips, macs):
        third, fourth = map(int, ip.split(".")[2:])
        assert mac == f"00:00:0a:00:{third:02x}:{fourth:02x}"


def test_the_first_hosts_past_the_switch() -> None:
    assert [host_ip(i) for i in (253, 254, 255, 256, 510)] == ["10.0.0.253", "10.0.1.0", "10.0.1.1", "10.0.1.2",
                                                                "10.0.2.0"]
    assert [host_mac(i) for i in (253, 254, 510)] == ["00:00:0a:00:00:fd", "00:00:0a:00:01:00", "00:00:0a:00:02:00"]


@pytest.mark.parametrize("ip", [SWITCH_IP, "10.0.0.255"])
def test_host_index_refuses_addresses_no_host_has(ip: str) -> None:
    with pytest.raises(ValueError, match="not a host's address"):
        host_index(ip)
