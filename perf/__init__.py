"""perf: performance measurement of the switches, outside the layers it measures. It may import any of them;
topo/ and tests/switch/process use only its shared helpers (machine, frames, netns, traffic, checkout); switch/
nothing.

    perf.machine      machine_info(): CPU model, cores, kernel, Python, load average (every report's header)
    topo.frames       Ethernet/IPv4/UDP frame builders, the INA DATA header, what an LPM router makes of a frame
    topo.netns        network namespaces wired by veth pairs (`hosts()`), a switch process (`SwitchProcess`, any
                      command with simple_switch_grpc's flags), helpers run inside a namespace (`NsProcess`)
    perf.traffic      what runs inside the namespaces: AF_PACKET sender and receiver (`python -m perf.traffic`)
    perf.ratesearch   the highest offered rate with loss below a bound: exponential ramp, then bisection
    perf.engine       the embedded engine in-process (`sw.process` loop, PacketLoop on in-memory ports)
    perf.workloads    the packet programs (basic_forward, agg64): compile, P4Runtime entries, frames, engine setup
    perf.switchml_job a 4-worker SwitchML all-reduce in namespaces against a switch under test
    perf.switchbench  `make bench-switch`: switches side by side (embedded, BMv2 when installed, `--compare CMD`,
                      `--compare-version DIR|REV`)
    perf.checkout     another version of the project to compare against: a directory, or a git revision exported
    perf.switchreport its report: results/bench/switch.md (absolute figures, ratios) and results/bench/switch.csv
"""
