"""StarTopo: N worker hosts around one P4 switch, and the job configuration derived from it.

Naming follows Mininet: hosts h1..hN (10.0.0.i, MAC 00:00:0a:00:00:ii), switch s1, host hI on switch port I.
The switch's INA service address is 10.0.0.254 / 00:00:0a:00:00:fe; worker rank r runs on host h(r+1).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mininet.net import Mininet
from mininet.topo import Topo

from topo.addresses import SWITCH_IP, SWITCH_MAC, WORKER_UDP_PORT, host_ip, host_mac
from topo.fabric import Attachment, Fabric
from worker.job import JobConfig

__all__ = ["StarTopo", "StarFabric", "SWITCH_IP", "SWITCH_MAC", "WORKER_UDP_PORT", "host_ip", "host_mac",
           "check_link_rates", "prepare_hosts", "set_queue_limits"]


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


class StarFabric(Fabric):
    """One switch s1; host hI on its port I. The switch aggregates every job."""

    name = "star"

    def topo(self) -> Topo:
        return StarTopo(self.hosts, bw=self.bw)

    @property
    def switches(self) -> list[str]:
        return ["s1"]

    def attachment(self, host: int) -> Attachment:
        return Attachment("s1", host)

    def forwarding(self, switch: str) -> tuple[list[tuple[str, int]], list[int]]:
        ports = list(range(1, self.hosts + 1))
        return [(host_mac(p), p) for p in ports], ports

    def install_job(self, controllers: Mapping[str, Any], job: JobConfig) -> None:
        controllers["s1"].create_job(job)


def check_link_rates(net: Mininet, bw: float) -> None:
    """Raise if a host link did not get its htb rate limit (Mininet only prints tc's errors)."""
    for h in net.hosts:
        intf = h.defaultIntf()
        out = h.cmd(f"tc qdisc show dev {intf}")
        if "htb" not in out:
            raise RuntimeError(f"link {intf} has no {bw:g} Mbit/s rate limit (tc says: {out.strip() or 'nothing'}); "
                               "is the sch_htb kernel module available?")


def set_queue_limits(net: Mininet, packets: int) -> None:
    """Give every rate-limited link end (TCLink's htb class 5:1, both ends) a drop-tail FIFO of `packets`: a switch
    port's buffer. Mininet's own `max_queue_size` needs netem, which this kernel lacks."""
    for link in net.links:
        for intf in (link.intf1, link.intf2):
            out = intf.node.cmd(f"tc qdisc replace dev {intf} parent 5:1 handle 10: pfifo limit {packets}")
            if out.strip():
                raise RuntimeError(f"cannot limit the queue of {intf} to {packets} packets: {out.strip()}")


TCP_CONGESTION = "reno"
"""The hosts' TCP congestion control: one every kernel has (a namespace inherits the machine's default, BBR on some
hosts, and may allow only reno besides it), and the one the packet simulator's TCP model follows."""


def prepare_hosts(net: Mininet) -> None:
    """Make hosts quiet and predictable: no checksum offload, no IPv6 chatter, static ARP (incl. the switch), one
    frame per packet the kernel queues (`gso_max_segs 1`: with `gso off` alone TCP still builds multi-segment
    packets, which htb then shapes as one unit, so flows take turns in bursts of ~30 frames), Reno."""
    for h in net.hosts:
        intf = h.defaultIntf()
        h.cmd(f"ethtool -K {intf} tx off rx off sg off tso off gso off gro off >/dev/null 2>&1")
        h.cmd(f"ip link set dev {intf} gso_max_segs 1 >/dev/null 2>&1")
        h.cmd(f"sysctl -qw net.ipv4.tcp_congestion_control={TCP_CONGESTION}")
        h.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1")
        h.setARP(SWITCH_IP, SWITCH_MAC)
    net.staticArp()
