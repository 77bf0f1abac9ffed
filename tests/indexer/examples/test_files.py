"""Reading users' examples: JSON, JSONL and CSV rows with their lines; every kind of bad row
rejected with its line and reason, never dropped silently; unreadable files as one-line errors."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexer import ExamplesFileError, read_examples
from indexer.examples.files import example_id

PAIR = {"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer"}


def test_json_list_rows_keep_their_lines_and_accept_spider_and_bird_names(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(
        "[\n"
        '  {"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer",\n'
        '   "db_id": "concert_singer", "evidence": "ignored"},\n'
        '  {"question": "List the pets.", "query": "SELECT * FROM Pets", "db_id": "pets_1"},\n'
        "\n"
        '  {"question": "Count cars.", "SQL": "SELECT count(*) FROM cars_data", "db_id": "car_1"}\n'
        "]\n"
    )
    found = read_examples(path)
    assert not found.rejected
    assert [(e.db_id, e.line) for e in found.examples] == [
        ("concert_singer", 2),
        ("pets_1", 4),
        ("car_1", 6),
    ]
    assert found.examples[1].sql == "SELECT * FROM Pets"
    assert {e.source for e in found.examples} == {str(path.resolve())}


def test_jsonl_rows_skip_blank_lines_and_reject_malformed_ones(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [
        json.dumps({**PAIR, "db_id": "concert_singer"}),
        "",
        "{not json",
        json.dumps({"question": "Pets?", "sql": "SELECT 1 FROM Pets", "db_id": "pets_1"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    found = read_examples(path)
    assert [e.line for e in found.examples] == [1, 4]
    [bad] = found.rejected
    assert bad.line == 3 and bad.where == f"{path.resolve()}:3"
    assert bad.reason.startswith("malformed JSON")


def test_csv_rows_start_where_their_record_starts(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "db_id,question,sql\n"
        'concert_singer,How many singers are there?,"SELECT count(*)\nFROM singer"\n'
        "\n"
        "pets_1,List the pets.,SELECT * FROM Pets\n"
        "pets_1,too many,SELECT 1,extra\n"
    )
    found = read_examples(path)
    assert [(e.db_id, e.line) for e in found.examples] == [("concert_singer", 2), ("pets_1", 5)]
    assert found.examples[0].sql == "SELECT count(*)\nFROM singer"
    [bad] = found.rejected
    assert (bad.line, bad.reason) == (6, "4 fields, the header has 3")


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"sql": "SELECT 1", "db_id": "d"}, "no question"),
        ({"question": "q", "db_id": "d"}, "no sql"),
        ({"question": "q", "sql": "SELECT 1"}, "no db_id"),
        ({"question": "  ", "sql": "SELECT 1", "db_id": "d"}, "question is empty"),
        ({"question": "q", "sql": 7, "db_id": "d"}, "sql must be text, got int"),
        ({"question": None, "sql": "SELECT 1", "db_id": "d"}, "question must be text, got null"),
        ({"question": "q" * 2001, "sql": "SELECT 1", "db_id": "d"}, "at most 2,000"),
        (["q", "SELECT 1", "d"], "expected an object with question, sql and db_id, got list"),
    ],
)
def test_each_kind_of_bad_row_is_rejected_with_its_line(
    tmp_path: Path, row: object, reason: str
) -> None:
    path = tmp_path / "log.jsonl"
    good = json.dumps({**PAIR, "db_id": "concert_singer"})
    path.write_text(f"{good}\n{json.dumps(row)}\n{good.replace('there', 'here')}\n")
    found = read_examples(path)
    assert [e.line for e in found.examples] == [1, 3]
    [bad] = found.rejected
    assert bad.line == 2 and reason in bad.reason, bad.reason


def test_the_same_pair_twice_is_rejected_naming_the_first(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    row = json.dumps({**PAIR, "db_id": "concert_singer"})
    path.write_text(f"{row}\n{row}\n")
    found = read_examples(path)
    assert len(found.examples) == 1
    [bad] = found.rejected
    assert (bad.line, bad.reason) == (2, "the same pair as line 1")
    assert bad.id == found.examples[0].id


def test_an_example_id_ignores_spacing_and_database_case() -> None:
    one = example_id("Concert_Singer", "How many  singers?", "SELECT count(*)\nFROM singer")
    two = example_id("concert_singer", "How many singers?", "SELECT count(*) FROM singer")
    assert one == two and one.startswith("ex_")
    assert example_id("pets_1", "How many singers?", "SELECT count(*) FROM singer") != one


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("missing.json", None, "no such file"),
        ("log.txt", "question,sql,db_id\n", "unknown examples format '.txt'"),
        ("log.json", '{"question": "q"}', "expected a JSON list of objects"),
        ("log.json", "[{]", "malformed JSON at line 1"),
        ("log.csv", "question,db_id\nq,d\n", "lacks sql"),
        ("log.csv", "", "lacks question, sql, db_id"),
        ("log.jsonl", b"\xff\xfe{", "not UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read_is_one_error_naming_it(
    tmp_path: Path, name: str, content: str | bytes | None, words: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ExamplesFileError) as caught:
        read_examples(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda s: s.strip() != ""
)


def _pair_id(pair: tuple[str, str, str]) -> str:
    question, sql, db_id = (text.strip() for text in pair)  # as the reader strips them
    return example_id(db_id, question, sql)


_pairs = st.lists(st.tuples(_text, _text, _text), min_size=1, max_size=6, unique_by=_pair_id)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=_pairs, ascii_only=st.booleans())
def test_every_format_reads_back_what_was_written_with_its_lines(
    tmp_path_factory: pytest.TempPathFactory, pairs: list[tuple[str, str, str]], ascii_only: bool
) -> None:
    """Any text (quotes, commas, newlines, U+2028, ...) survives each format, on the line where
    its row starts."""
    folder = tmp_path_factory.mktemp("formats")
    rows = [{"question": q, "sql": s, "db_id": d} for q, s, d in pairs]
    expected = [(q.strip(), s.strip(), d.strip()) for q, s, d in pairs]
    files = {
        "log.json": json.dumps(rows, indent=1, ensure_ascii=ascii_only),
        "log.jsonl": "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in rows),
    }
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=["question", "sql", "db_id"])
    writer.writeheader()
    starts = []  # a row's line: line ends (CR, LF or CRLF, as editors count them) before it, + 1
    for row in rows:
        starts.append(len(re.findall(r"\r\n|\r|\n", buffer.getvalue())) + 1)
        writer.writerow(row)
    files["log.csv"] = buffer.getvalue()
    lines = {
        "log.json": [2 + 5 * i for i in range(len(rows))],  # "[" then 5 lines per object
        "log.jsonl": [1 + i for i in range(len(rows))],
        "log.csv": starts,
    }
    for name, text in files.items():
        path = folder / name
        path.write_text(text, encoding="utf-8", newline="")
        found = read_examples(path)
        assert not found.rejected, (name, found.rejected)
        assert [(e.question, e.sql, e.db_id) for e in found.examples] == expected, name
        assert [e.line for e in found.examples] == lines[name], name
