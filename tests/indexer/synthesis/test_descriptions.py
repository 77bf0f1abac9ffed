"""Descriptions in template synthesis: a column described with a short phrase is asked about
with that phrase, not its name; the SQL and the seeds do not change."""

from __future__ import annotations

from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.profiles import profile_traversal
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import Catalog, Column, Database, Table, Traversal
from schemagraph.documentation import describe

LAB = Table(
    "Laboratory",
    (
        Column("ID", "INTEGER", True),
        Column("T-BIL", "REAL"),
        Column("GOT", "REAL"),
        Column("UA", "REAL"),
    ),
)
PLAIN = Database("clinic", (LAB,))
DESCRIBED = next(
    iter(
        describe(
            Catalog((PLAIN,)),
            {
                ("clinic", "laboratory", "t-bil"): "Total bilirubin: mg/dL, normal below 2.0",
                ("clinic", "laboratory", "got"): "AST glutamic oxaloacetic transaminase",
                # a sentence is not a phrase: the name is used
                ("clinic", "laboratory", "ua"): "The uric acid measured in the blood of the "
                "patient during the examination.",
            },
        )
    )
)
TRAVERSAL = Traversal("clinic", ("Laboratory",), "enumerated")


def _pairs(db: Database, seed: int = 0) -> list[tuple[str, str]]:
    request = SynthesisRequest(db, TRAVERSAL, None, count=12, seed=seed)
    return [(p.question, p.sql) for p in TemplateSynthesizer().synthesize(request)]


def test_described_columns_are_asked_about_with_their_phrase() -> None:
    info = profile_traversal(DESCRIBED, TRAVERSAL, None)
    words = {c.name: c.words for c in info.tables[0].columns}
    assert words == {
        "ID": "ID",
        "T-BIL": "total bilirubin",
        "GOT": "AST glutamic oxaloacetic transaminase",
        "UA": "UA",
    }
    questions = " ".join(q for q, _ in _pairs(DESCRIBED)).lower()
    plain = " ".join(q for q, _ in _pairs(PLAIN)).lower()
    assert "total bilirubin" in questions and "t bil" not in questions
    assert "t bil" in plain and "total bilirubin" not in plain


def test_descriptions_change_the_words_not_the_sql_and_stay_deterministic() -> None:
    described = _pairs(DESCRIBED, seed=3)
    assert described == _pairs(DESCRIBED, seed=3)
    assert [s for _, s in described] == [s for _, s in _pairs(PLAIN, seed=3)]
