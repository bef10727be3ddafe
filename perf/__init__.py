"""perf: measuring the switches against their references — speed (the switch benchmark) and agreement (the
differential test against real BMv2, the conformance run over p4c's samples). It may import every floor below it;
nothing below imports it.

    perf.machine      machine_info(): date, commit, CPU model, cores, kernel, Python, load average (every report)
    perf.traffic      what runs inside the namespaces: AF_PACKET sender and receiver (`python -m perf.traffic`), and
                      `NsProcess`, which runs them there
    perf.ratesearch   the highest offered rate with loss below a bound: exponential ramp, then bisection
    perf.engine       the embedded engine in-process (`sw.process` loop, PacketLoop on in-memory ports)
    perf.workloads    the packet programs (basic_forward, agg64): compile, P4Runtime entries, frames, engine setup
    perf.switchml_job a 4-worker SwitchML all-reduce in namespaces against a switch under test
    perf.harness      switches under test, settings, measurements
    perf.switchbench  `make bench-switch`: switches side by side (embedded, BMv2 when installed, `--compare CMD`,
                      `--compare-version DIR|REV`)
    perf.switchreport its report: results/bench/switch.md (absolute figures, ratios) and results/bench/switch.csv
    perf.checkout     another version of the project to compare against: a directory, or a git revision exported
    perf.difftest     `make difftest`: the same frames through two switches, every output compared
    perf.conformance  p4c's sample programs through the embedded compiler and switch (`python -m perf.conformance`)
"""
