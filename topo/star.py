"""StarTopo: N worker hosts around one P4 switch, and the job configuration derived from it.

Naming follows Mininet: hosts h1..hN (10.0.0.i, MAC 00:00:0a:00:00:ii), switch s1, host hI on switch port I.
The switch's INA service address is 10.0.0.254 / 00:00:0a:00:00:fe; worker rank r runs on host h(r+1).
"""

from __future__ import annotations

from typing import Any

from mininet.net import Mininet
from mininet.topo import Topo

from worker.job import JobConfig, PoolRange, SwitchAddress, WorkerSpec

SWITCH_IP = "10.0.0.254"
SWITCH_MAC = "00:00:0a:00:00:fe"
WORKER_UDP_PORT = 50000


def host_ip(i: int) -> str:
    """IPv4 address of host h<i>."""
    return f"10.0.0.{i}"


def host_mac(i: int) -> str:
    """MAC address of host h<i>."""
    return f"00:00:0a:00:00:{i:02x}"


class StarTopo(Topo):
    """One switch s1 with hosts h1..hN, host hI on switch port I.

    `bw` (Mbit/s) limits every link in both directions with an htb qdisc (Mininet's TCLink; build the network with
    `link=TCLink`). Only the rate: this kernel has no netem, so delay and loss come from the switch (the P4 drop
    simulator), never from the links.
    """

    def build(self, n: int = 4, bw: float | None = None, **switch_opts: Any) -> None:  # type: ignore[override]
        if not 1 <= n <= 32:
            raise ValueError(f"StarTopo supports 1..32 hosts, got {n}")
        if bw is not None and not bw > 0:
            raise ValueError(f"link rate must be > 0 Mbit/s, got {bw}")
        s1 = self.addSwitch("s1", **switch_opts)
        link_opts = {"bw": bw} if bw is not None else {}
        for i in range(1, n + 1):
            h = self.addHost(f"h{i}", ip=f"{host_ip(i)}/24", mac=host_mac(i))
            self.addLink(h, s1, port2=i, **link_opts)


topos = {"star": StarTopo}


def check_link_rates(net: Mininet, bw: float) -> None:
    """Raise if a host link did not get its htb rate limit (Mininet only prints tc's errors)."""
    for h in net.hosts:
        intf = h.defaultIntf()
        out = h.cmd(f"tc qdisc show dev {intf}")
        if "htb" not in out:
            raise RuntimeError(f"link {intf} has no {bw:g} Mbit/s rate limit (tc says: {out.strip() or 'nothing'}); "
                               "is the sch_htb kernel module available?")


def prepare_hosts(net: Mininet) -> None:
    """Make hosts quiet and predictable: no checksum offload, no IPv6 chatter, static ARP (incl. the switch)."""
    for h in net.hosts:
        intf = h.defaultIntf()
        h.cmd(f"ethtool -K {intf} tx off rx off sg off tso off gso off gro off >/dev/null 2>&1")
        h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        h.setARP(SWITCH_IP, SWITCH_MAC)
    net.staticArp()


def job_config(net: Mininet, *, job_id: int = 1, num_elems: int = 64, pool_base: int = 0,
               pool_size: int = 64, hosts: list[Any] | None = None) -> JobConfig:
    """The job of `hosts` (default: all hosts) of a StarTopo network: rank r on the r-th host (h(r+1) by default)."""
    switch = net.switches[0]
    workers = []
    for rank, h in enumerate(hosts if hosts is not None else sorted(net.hosts, key=lambda h: int(h.name[1:]))):
        link = h.defaultIntf().link
        sw_intf = link.intf2 if link.intf1.node is h else link.intf1
        workers.append(WorkerSpec(rank=rank, ip=h.IP(), mac=h.MAC(), udp_port=WORKER_UDP_PORT,
                                  switch_port=switch.ports[sw_intf]))
    return JobConfig(job_id=job_id, num_elems=num_elems, switch=SwitchAddress(ip=SWITCH_IP, mac=SWITCH_MAC),
                     pool=PoolRange(base=pool_base, size=pool_size), workers=workers)
