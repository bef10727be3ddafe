"""Where the tests find the repository and their own data, wherever a test module sits in the tree."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
"""tests/: its data folders (fixtures/, p4/) and helper modules (importable as `tests.<folder>.<module>`)."""
ROOT = TESTS.parent
"""The repository: p4src/, experiments/, ..."""
