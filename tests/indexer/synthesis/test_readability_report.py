"""The build report's readability figure: each kept record says whether its question failed the
check, and the report adds them up into a rate with the kinds of failure."""

from __future__ import annotations

from pathlib import Path

from indexer.building.report import BuildReport
from indexer.synthesis.chains import make_chain_runner
from indexer.synthesis.feedback import RuleFeedback
from indexer.synthesis.readability import readability_problems
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import Catalog, Traversal, load_spider, sample_database


def test_kept_records_carry_their_readability(sample_dir: Path) -> None:
    db = load_spider(sample_dir).database("concert_singer")
    runner = make_chain_runner(TemplateSynthesizer(), RuleFeedback(), chains=3, iterations=1)
    traversal = Traversal(db.id, ("singer",), "enumerated")
    records = runner(db, traversal, sample_database(db), 3)
    kept = [r for r in records if "question" in r]
    assert kept
    for record in kept:
        stats = record["stats"]
        assert stats["readability_checked"] == 1
        failed = readability_problems(record["question"])
        assert stats.get("unreadable", 0) == int(bool(failed))
        assert set(stats.get("unreadable_kinds", {})) == set(failed)
    for record in records:
        if "question" not in record:
            assert "readability_checked" not in record["stats"]


def test_the_report_gives_the_failure_rate_and_kinds() -> None:
    stats = [
        {"chains": 1, "readability_checked": 1},
        {"chains": 1, "readability_checked": 1, "unreadable": 1, "unreadable_kinds": {"code": 1}},
        {
            "chains": 1,
            "readability_checked": 1,
            "unreadable": 1,
            "unreadable_kinds": {"code": 1, "run-on": 1},
        },
        {"chains": 1, "readability_checked": 1},
    ]
    report = BuildReport.from_stats(
        build_id="b1",
        catalog=Catalog(),
        traversals=4,
        synthesized_traversals=4,
        removed_traversals=0,
        reused_traversals=0,
        removed_records=0,
        questions=4,
        stats=stats,
        timings={},
        seconds=1.0,
    )
    assert (report.readability_checked, report.unreadable) == (4, 2)
    assert report.unreadable_kinds == {"code": 2, "run-on": 1}
    assert report.as_dict()["unreadable"] == 2
    line = next(x for x in report.lines() if "readability" in x)
    assert "2 of 4 kept questions (50.0 %) fail (code 2, run-on 1)" in line
