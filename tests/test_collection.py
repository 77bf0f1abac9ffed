"""Every test file is collected: no folder of tests matches a pattern pytest skips."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the folders pytest skips unless `norecursedirs` says otherwise (its documented default)
PYTEST_SKIPS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}")


def test_no_folder_of_tests_is_skipped_by_pytest() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "norecursedirs" not in config  # pytest's own default applies
    skipped = [
        path
        for path in (REPO / "tests").rglob("test_*.py")
        for part in path.relative_to(REPO / "tests").parent.parts
        if any(fnmatch.fnmatch(part, pattern) for pattern in PYTEST_SKIPS)
    ]
    assert skipped == []
    assert (REPO / "tests/indexer/building/test_plan.py").exists()
