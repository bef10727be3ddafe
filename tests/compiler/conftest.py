"""The compiler tests' helper modules (`error_template`) import by name under --import-mode=importlib."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
