"""perf: performance measurement of the switches, outside the layers it measures (it may import any of them; none
of them imports perf except for the shared helpers below).

    perf.machine      machine_info(): CPU model, cores, kernel, Python, load average (every report's header)
    perf.frames       Ethernet/IPv4/UDP frame builders, the INA DATA header, what an LPM router makes of a frame
    perf.netns        network namespaces wired by veth pairs (`hosts()`), a switch process (`SwitchProcess`, any
                      command with simple_switch_grpc's flags), helpers run inside a namespace (`NsProcess`)
    perf.traffic      what runs inside the namespaces: AF_PACKET sender and receiver (`python -m perf.traffic`)
    perf.ratesearch   the highest offered rate with loss below a bound: exponential ramp, then bisection
    perf.engine       the embedded engine in-process (`sw.process` loop, PacketLoop on in-memory ports)
    perf.workloads    the benchmark programs: compile, install over P4Runtime, frames, the SwitchML job
    perf.switchbench  `make bench-switch`: switches side by side (embedded, BMv2 when installed, `--compare CMD`)
"""
