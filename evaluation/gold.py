"""Spider dev questions on the bundled sample databases, for the generation benchmarks when the
full Spider data is absent: twelve per database, evenly spaced through dev.json, with their gold
SQL (whitespace collapsed), in `data/spider_sample_questions.json` (Spider's dev.json layout:
`db_id`, `question`, `query`). Spider (Yu et al., 2018) is licensed CC BY-SA 4.0.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

SAMPLE_QUESTIONS_FILE = "spider_sample_questions.json"


@cache
def sample_questions() -> tuple[tuple[str, str, str], ...]:
    """The sample's questions as (db_id, question, gold SQL), in file order."""
    text = (files("evaluation") / "data" / SAMPLE_QUESTIONS_FILE).read_text("utf-8")
    return tuple((row["db_id"], row["question"], row["query"]) for row in json.loads(text))
