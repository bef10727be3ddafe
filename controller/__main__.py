"""Entry point: `python -m controller --help`."""

import os
import sys

# grpc's C core logs every failed TLS handshake at INFO; the CLI's own error line says what failed
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

from controller.cli import main  # noqa: E402 (after the environment grpc reads)

sys.exit(main())
