"""The suite's grouping (docs/testing.md): every test file sits in one group by what it tests.

- ``unit/``: our own code, no upstream interpreter;
- ``differential/``: ours compared with upstream, each in its own process (shared helpers in
  ``differential/harness/``);
- ``system/``: end to end — real processes, real models, ecosystem libraries, federated fleets,
  packaging.

A test file anywhere else fails here, and so does a unit test that reaches for the upstream
harness (it belongs in ``differential/`` then), and a README or docs page naming a test file that
is not where it says.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
GROUPS = ("unit", "differential", "system")
# the only Python file at the top: the options and upstream check every group shares
TOP_LEVEL = {"conftest.py"}
UPSTREAM_HARNESS = ("torchnative.testing import upstream", "torchnative.testing.upstream",
                    "torchnative.testing.golden", "UPSTREAM_PYTHON", "import sides",
                    "from sides import")


def misplaced(tests: Path) -> list[str]:
    """Test files outside the groups, and Python files at the top besides conftest.py."""
    out = []
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests)
        if "__pycache__" in rel.parts:
            continue
        if len(rel.parts) == 1:
            if rel.name not in TOP_LEVEL:
                out.append(str(rel))
        elif rel.parts[0] not in GROUPS and path.name.startswith("test_"):
            out.append(str(rel))
    return out


def unit_tests_using_upstream(tests: Path) -> list[str]:
    """Unit files that name the upstream harness (this file names it only to look for it)."""
    return sorted(str(p.relative_to(tests)) for p in (tests / "unit").rglob("*.py")
                  if p.name != Path(__file__).name
                  and any(marker in p.read_text() for marker in UPSTREAM_HARNESS))


def stale_test_paths(repo: Path) -> list[str]:
    """``tests/...`` files the README and docs/*.md name that do not exist."""
    pages = [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]
    return sorted({f"{p.relative_to(repo)}: {m}" for p in pages if p.exists()
                   for m in re.findall(r"tests/[\w/]+\.(?:py|json)", p.read_text())
                   if not (repo / m).exists()})


def test_every_test_file_is_in_a_group():
    assert misplaced(TESTS) == [], "move these into tests/unit, tests/differential or tests/system"


def test_each_group_holds_tests():
    for group in GROUPS:
        assert list((TESTS / group).glob("test_*.py")), f"tests/{group} holds no test file"


def test_unit_tests_do_not_run_upstream():
    assert unit_tests_using_upstream(TESTS) == [], \
        "these compare with upstream: move them to tests/differential"


def test_docs_name_test_files_where_they_are():
    assert stale_test_paths(TESTS.parent) == [], "update these paths"


def test_the_checks_catch_a_planted_file(tmp_path):
    """Controls: a test file at the top, one in an unknown folder, a stray helper at the top and
    a unit test that starts upstream are each reported; files in their groups are not."""
    for group in GROUPS:
        (tmp_path / group).mkdir()
        (tmp_path / group / "test_fine.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "differential" / "harness").mkdir()
    (tmp_path / "differential" / "harness" / "compare.py").write_text("")
    assert misplaced(tmp_path) == []
    assert unit_tests_using_upstream(tmp_path) == []

    (tmp_path / "test_stray.py").write_text("")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "test_lost.py").write_text("")
    (tmp_path / "helper.py").write_text("")
    assert misplaced(tmp_path) == ["elsewhere/test_lost.py", "helper.py", "test_stray.py"]
    (tmp_path / "unit" / "test_sneaky.py").write_text("from torchnative.testing import upstream\n")
    (tmp_path / "unit" / "test_both_sides.py").write_text("import sides\n")
    assert unit_tests_using_upstream(tmp_path) == ["unit/test_both_sides.py", "unit/test_sneaky.py"]


def test_the_docs_check_catches_a_stale_path(tmp_path):
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_fine.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("`pytest tests/unit/test_fine.py tests/test_gone.py`")
    assert stale_test_paths(tmp_path) == ["docs/page.md: tests/test_gone.py"]


def duplicate_basenames(tests: Path) -> list[str]:
    """Test files sharing a name across groups: pytest imports them by basename and refuses the
    second at collection, which stops the whole run."""
    seen: dict[str, list[str]] = {}
    for p in sorted(tests.rglob("test_*.py")):
        seen.setdefault(p.name, []).append(str(p.relative_to(tests)))
    return sorted(n for n, paths in seen.items() if len(paths) > 1)


def test_test_file_names_are_unique():
    assert duplicate_basenames(TESTS) == [], "rename one of each pair"


def test_a_duplicate_name_is_caught(tmp_path):
    for group in GROUPS[:2]:
        (tmp_path / group).mkdir()
        (tmp_path / group / "test_same.py").write_text("")
    assert duplicate_basenames(tmp_path) == ["test_same.py"]
