"""`python -m experiments.bench`: the all-reduce goodput grid (`experiments.bench.allreduce`)."""

import sys

from experiments.bench.allreduce import main

sys.exit(main())
