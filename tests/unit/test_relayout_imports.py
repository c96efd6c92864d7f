"""tools/relayout_imports.py respells code written against the flat csrc for the layer packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OLD = '''import sys
from torchnative.csrc import door, dtypes as D
def f():
    from torchnative.csrc.refuse import TorchnativeNotImplementedError
    return sys.modules.get("torchnative.csrc.autograd.dispatch"), "torchnative.csrc.door.served"
# see csrc/door.py and torchnative.csrc.surface.refusals
'''

NEW = '''import sys
from torchnative.csrc.dispatch import door
from torchnative.csrc.core import dtypes as D
def f():
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError
    return sys.modules.get("torchnative.csrc.autograd.dispatch"), "torchnative.csrc.dispatch.door.served"
# see csrc/dispatch/door.py and torchnative.csrc.surface.refusals
'''


def test_old_imports_strings_and_paths_are_respelled(tmp_path):
    f = tmp_path / "old.py"
    f.write_text(OLD)
    subprocess.run([sys.executable, str(ROOT / "tools" / "relayout_imports.py"), str(f)], check=True)
    assert f.read_text() == NEW
    # a second pass changes nothing (names of the new layout are left alone)
    subprocess.run([sys.executable, str(ROOT / "tools" / "relayout_imports.py"), str(f)], check=True)
    assert f.read_text() == NEW
