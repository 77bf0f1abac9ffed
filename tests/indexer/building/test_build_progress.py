"""A build's progress in a log (stderr not a terminal): a line as soon as synthesis starts,
then at least one per 10 % of every stage (the table documents: per 10 % or per embedding batch,
whichever is larger), as the README says."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from indexer.building.load import EMBED_STEP, chunk_size
from schemarag.cli import main

LINE = re.compile(r"^(synthesized|loaded|embedded) (\d+)/(\d+) \S.* \((\d+)%\)$")


def test_every_stage_says_each_tenth(
    sample_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    argv = ["index", "build", f"spider:{sample_dir}", "--store", str(tmp_path / "kb")]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--processes", "0"]) == 0
    lines = capsys.readouterr().err.splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    # the first line comes before any traversal is synthesized
    assert parsed[0] is not None and (parsed[0][1], parsed[0][2]) == ("synthesized", "0"), lines
    for stage in ("synthesized", "loaded"):
        percents = [int(m[4]) for m in parsed if m is not None and m[1] == stage]
        assert percents[-1] == 100, (stage, lines)
        tenths = {p // 10 for p in percents}
        assert set(range(1, 11)) <= tenths, (stage, percents)
    embedded = [(int(m[2]), int(m[3])) for m in parsed if m is not None and m[1] == "embedded"]
    assert embedded[-1][0] == embedded[-1][1] == 53
    done = [0] + [d for d, _ in embedded]
    steps = [after - before for before, after in itertools.pairwise(done)]
    assert steps and all(step <= max(EMBED_STEP, 53 // 10) for step in steps), embedded


@pytest.mark.parametrize(
    ("total", "most", "least", "size"),
    [
        (0, 64, 1, 1),
        (7, 64, 1, 1),
        (139, 64, 1, 13),
        (100_000, 64, 1, 64),
        (53, 256, 32, 32),
        (5_000, 256, 32, 256),
        (1_000, 256, 32, 100),
    ],
)
def test_a_step_is_at_most_a_tenth_unless_under_the_least(
    total: int, most: int, least: int, size: int
) -> None:
    assert chunk_size(total, most, least) == size
