"""topo: Mininet topologies and the P4 switch node.

    topo.target    Target: embedded (`python -m switch`) or bmv2 (`simple_switch_grpc`), chosen by TARGET
    topo.p4switch  P4Switch: Mininet switch node running the switch process; SwitchStartError quotes its log
    topo.star      StarTopo (h1..hN around s1), host preparation (offloads off, static ARP), job config
"""
