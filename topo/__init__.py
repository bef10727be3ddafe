"""topo: networks only — Mininet topologies, the P4 switch node, namespaces, and the in-process network.

    topo.target      Target: embedded (`python -m switch`) or bmv2 (`simple_switch_grpc`), chosen by TARGET
    topo.p4switch    P4Switch: Mininet switch node running the switch process; SwitchStartError quotes its log
    topo.switchproc  starting a switch process and waiting, bounded, until it serves
    topo.fabric      Fabric: a network's shape (where hosts plug in, L2 entries, job roles per switch), host naming
    topo.star        StarTopo / StarFabric (h1..hN around s1), host preparation (offloads off, static ARP)
    topo.twotier     TwoTierTopo / TwoTierFabric: rack switches under a PS rack switch, aggregation on one or two levels
    topo.topologies  the fabrics by name (`--topo star|twotier`)
    topo.network     Network: a running Mininet network of P4 switches programmed by their controllers
    topo.cpus        the CPU layout of switch and host processes
    topo.tls         CertDir: a throwaway CA, server and client certificates for P4Runtime over TLS (`make run TLS=1`)
    topo.netns       network namespaces wired by veth pairs to a switch process (`hosts()`, `SwitchProcess`)
    topo.frames      Ethernet/IPv4/UDP frame builders
    topo.inprocess   any in-network protocol's ranks and the embedded switch engine in one process, fake time, faults

What runs on these networks (the runner, sweeps, studies, the soak) is experiments/.
"""
