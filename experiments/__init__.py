"""experiments: what runs on the networks, and what it reports.

    experiments.config     ExperimentConfig (and its NetworkConfig view): every knob of a run, checked up front
    experiments.session    ExperimentNetwork: the session that owns a network and runs workloads on it; run_experiment
    experiments.result     ExperimentResult: what a run measured (`make run`'s table), fault_report
    experiments.run        `make run`: the command line
    experiments.bound      what bound a run (links, resends, a busy machine, CPUs, losses, else latency)
    experiments.load       the machine's load from outside a run
    experiments.calibrate  link rates the switch and hosts keep up with (BW=auto)
    experiments.scenario   scenario files (TOML) -> points; experiments.sweep runs them, experiments.report reports
    experiments.rows       runs.csv's one schema; results directories
    experiments.figures    `make figures`: the docs' figures, stamped with their commit
    experiments.study      what the studies share (parser, results)
    experiments.resume     resuming an interrupted study (--resume DIR): the row key, what is skipped, what is refused
    experiments.interrupt  Ctrl-C: the network torn down once, then how to resume
    experiments.multitenant, experiments.twolevel, experiments.train, experiments.allreduce_perf   the studies
    experiments.soak       the exactly-once soak of every in-network protocol; experiments.fuzz, its fuzzing
    experiments.bench      `make bench`: the all-reduce goodput grid, the scaling sweep, a comparison with another version
"""
