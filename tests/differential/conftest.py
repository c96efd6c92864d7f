"""The differential group's shared harness (harness/: comparing ours with upstream, each in its
own process) is importable by name from every test here."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
