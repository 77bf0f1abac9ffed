"""Reading users' (question, SQL, database) examples from JSON, JSONL or CSV files.

    found = read_examples(Path("query_log.jsonl"))
    found.examples   # UserExample(question, sql, db_id, source, line), in file order
    found.rejected   # Rejected(where="query_log.jsonl:7", reason="no sql"), one per bad row

The format follows the file's suffix: `.json` (a list of objects), `.jsonl` / `.ndjson` (one
object a line) or `.csv` (a header row). Each row needs a question, its SQL and the database id;
the SQL may be named `sql`, `query` or `SQL` (Spider's and BIRD's names), other fields are
ignored. A row that lacks one, or holds something other than text, is rejected with its line;
a file that cannot be read at all (missing, not UTF-8, not a list, a CSV without those columns)
raises `ExamplesFileError`, one line naming the file and the fix.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from indexer.errors import ExamplesFileError
from schemagraph.model import fold

SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")
QUESTION_KEYS = ("question",)
SQL_KEYS = ("sql", "query", "SQL")
DB_KEYS = ("db_id",)
#: a question longer than this is not one an analyst asked (the HTTP API's limit too)
MAX_QUESTION_CHARS = 2000
#: SQL longer than this is refused before parsing (the SQL guard's own cap is lower or equal)
MAX_SQL_CHARS = 100_000


def example_id(db_id: str, question: str, sql: str) -> str:
    """The id of a pair: the same question and SQL on the same database is the same example,
    whichever file or request brought it."""
    text = "\x1f".join([fold(db_id), " ".join(question.split()), " ".join(sql.split())])
    return "ex_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class UserExample:
    """One (question, SQL) pair a person wrote for database `db_id`. `source`: the file it came
    from (its absolute path) or a label (`http`, `python`, ...); `line`: its line there."""

    question: str
    sql: str
    db_id: str
    source: str = "python"
    line: int | None = None

    @property
    def id(self) -> str:
        return example_id(self.db_id, self.question, self.sql)

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source


@dataclass(frozen=True)
class Rejected:
    """A row or example that does not enter the knowledge base, and why."""

    where: str
    reason: str
    id: str | None = None
    line: int | None = None

    def text(self) -> str:
        return f"{self.where}: {self.reason}"


@dataclass(frozen=True)
class ExampleFile:
    examples: tuple[UserExample, ...]
    rejected: tuple[Rejected, ...]


def read_examples(path: Path, *, source: str | None = None) -> ExampleFile:
    """The examples of `path` (see the module docstring); `source` overrides the label they
    carry (default: the file's absolute path)."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ExamplesFileError(
            f"{path}: unknown examples format {suffix or '(no suffix)'!r}; name the file "
            ".json (a list of objects), .jsonl (one object a line) or .csv (with a header)"
        )
    try:
        # newline="": a CR inside a quoted CSV field is data, not a line end
        with path.open(encoding="utf-8-sig", newline="") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ExamplesFileError(
            f"{path}: no such file; pass the path of an examples file"
        ) from None
    except IsADirectoryError:
        raise ExamplesFileError(f"{path}: is a folder; pass an examples file") from None
    except UnicodeDecodeError as exc:
        raise ExamplesFileError(
            f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8"
        ) from None
    except OSError as exc:
        raise ExamplesFileError(f"{path}: cannot be read ({exc.strerror})") from None
    label = source or str(path.resolve())
    if suffix == ".json":
        rows = _json_rows(path, text)
    elif suffix == ".csv":
        rows = _csv_rows(path, text)
    else:
        rows = list(_jsonl_rows(text))
    return parse_rows(rows, label)


def parse_rows(rows: Iterable[tuple[int, Any]], source: str) -> ExampleFile:
    """(line, row) pairs as examples and rejections; a row is a mapping, or a string saying why
    its line could not be read. Rejections are located as `source:line`."""
    examples: list[UserExample] = []
    rejected: list[Rejected] = []
    first_line: dict[str, int] = {}
    for line, row in rows:
        where = f"{source}:{line}"
        if isinstance(row, str):
            rejected.append(Rejected(where, row, line=line))
            continue
        fields, problem = row_fields(row)
        if problem:
            rejected.append(Rejected(where, problem, line=line))
            continue
        example = UserExample(*fields, source=source, line=line)
        if example.id in first_line:
            reason = f"the same pair as line {first_line[example.id]}"
            rejected.append(Rejected(where, reason, example.id, line))
            continue
        first_line[example.id] = line
        examples.append(example)
    return ExampleFile(tuple(examples), tuple(rejected))


def row_fields(row: Any) -> tuple[tuple[str, str, str], str]:
    """(question, sql, db_id) of a row, or a reason it has none."""
    if not isinstance(row, Mapping):
        return ("", "", ""), f"expected an object with question, sql and db_id, got {_kind(row)}"
    values: list[str] = []
    for name, keys in (("question", QUESTION_KEYS), ("sql", SQL_KEYS), ("db_id", DB_KEYS)):
        key = next((k for k in keys if k in row), None)
        if key is None:
            return ("", "", ""), f"no {name}"
        value = row[key]
        if not isinstance(value, str):
            return ("", "", ""), f"{key} must be text, got {_kind(value)}"
        if not value.strip():
            return ("", "", ""), f"{key} is empty"
        values.append(value.strip())
    question, sql, db_id = values
    if len(question) > MAX_QUESTION_CHARS:
        return ("", "", ""), (
            f"the question has {len(question):,} characters; at most {MAX_QUESTION_CHARS:,}"
        )
    if len(sql) > MAX_SQL_CHARS:
        return ("", "", ""), f"the SQL has {len(sql):,} characters; at most {MAX_SQL_CHARS:,}"
    return (question, sql, db_id), ""


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _json_rows(path: Path, text: str) -> list[tuple[int, Any]]:
    """The items of a JSON list with the line each starts on."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExamplesFileError(
            f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}; fix it, or write one "
            "object a line in a .jsonl file"
        ) from None
    if not isinstance(data, list):
        raise ExamplesFileError(
            f"{path}: expected a JSON list of objects with question, sql and db_id, "
            f"got {_kind(data)}"
        )
    decoder = json.JSONDecoder()
    rows: list[tuple[int, Any]] = []
    at = text.index("[") + 1
    for _ in data:
        at = _skip(text, at, ",")
        line = text.count("\n", 0, at) + 1
        item, at = decoder.raw_decode(text, at)
        rows.append((line, item))
    return rows


def _skip(text: str, at: int, separators: str) -> int:
    while at < len(text) and (text[at].isspace() or text[at] in separators):
        at += 1
    return at


def _jsonl_rows(text: str) -> Iterator[tuple[int, Any]]:
    # split at LF only: JSON text may hold U+2028 and other characters str.splitlines breaks at
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"malformed JSON: {exc.msg} (column {exc.colno})"


def _csv_rows(path: Path, text: str) -> list[tuple[int, Any]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
    except csv.Error as exc:
        raise ExamplesFileError(f"{path}:1: malformed CSV header ({exc})") from None
    header = [h.strip() for h in header]
    missing = [
        name
        for name, keys in (("question", QUESTION_KEYS), ("sql", SQL_KEYS), ("db_id", DB_KEYS))
        if not any(k in header for k in keys)
    ]
    if missing:
        raise ExamplesFileError(
            f"{path}: the CSV header {','.join(header) or '(empty)'} lacks "
            f"{', '.join(missing)}; the first row must name the columns question, sql and db_id"
        )
    rows: list[tuple[int, Any]] = []
    while True:
        line = reader.line_num + 1  # where the next record starts (a field may span lines)
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ExamplesFileError(f"{path}:{line}: malformed CSV ({exc})") from None
        if not row:
            continue  # a blank line
        if len(row) != len(header):
            rows.append((line, f"{len(row)} fields, the header has {len(header)}"))
            continue
        rows.append((line, dict(zip(header, row, strict=True))))
    return rows
