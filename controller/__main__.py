"""Entry point: `python -m controller --help`."""

import sys

from controller.cli import main

sys.exit(main())
