"""Every test file is collected: no folder of tests matches a pattern pytest skips."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_no_folder_of_tests_is_skipped_by_norecursedirs() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    # pytest's default skips `build`, which would hide tests/indexer/build/ without a word
    patterns = config["norecursedirs"]
    assert "build" not in patterns
    skipped = [
        path
        for path in (REPO / "tests").rglob("test_*.py")
        for part in path.relative_to(REPO / "tests").parent.parts
        if any(fnmatch.fnmatch(part, pattern) for pattern in patterns)
    ]
    assert skipped == []
    assert (REPO / "tests/indexer/build/test_plan.py").exists()
