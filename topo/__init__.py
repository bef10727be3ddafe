"""topo: Mininet topologies, the P4 switch node and the experiments run on them.

    topo.target      Target: embedded (`python -m switch`) or bmv2 (`simple_switch_grpc`), chosen by TARGET
    topo.p4switch    P4Switch: Mininet switch node running the switch process; SwitchStartError quotes its log
    topo.fabric      Fabric: a network's shape (where hosts plug in, L2 entries, job roles per switch), host naming
    topo.star        StarTopo / StarFabric (h1..hN around s1), host preparation (offloads off, static ARP)
    topo.twotier     TwoTierTopo / TwoTierFabric: rack switches under a PS rack switch, ATP on one or two levels
    experiments.run  ExperimentNetwork and `make run`; experiments.sweep, experiments.multitenant, experiments.twolevel, experiments.train
    topo.inprocess   the switch engine and the hosts' protocol cores in one process, fake time, fault plans
    experiments.soak        the exactly-once soak (`make soak`); experiments.fuzz, its fuzzing campaigns (hypothesis)
"""
