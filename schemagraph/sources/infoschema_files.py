"""Reading the files of an INFORMATION_SCHEMA export (`schemagraph.sources.infoschema`): CSV
with a header row, JSON lines or a JSON array, maybe gzipped; each file's view recognised by its
header, its rows as lists of strings, and what reading it found wrong."""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemagraph.documentation import clean
from schemagraph.errors import SourceError
from schemagraph.model import fold
from schemagraph.sources.export_dialect import file_dialect

SUFFIXES = (".csv", ".json", ".jsonl", ".ndjson")
CSV_FIELD_LIMIT = 1 << 30
HELP = (
    "infoschema: reads CSV (with a header) or JSON lines exports of INFORMATION_SCHEMA.COLUMNS, "
    "COLUMN_FIELD_PATHS, TABLES, TABLE_OPTIONS, TABLE_CONSTRAINTS and KEY_COLUMN_USAGE"
)


@dataclass(frozen=True)
class View:
    name: str
    marks: frozenset[str]  # header names that identify the view
    required: tuple[str, ...]


#: tried in order: the first whose marks the header holds
_VIEWS = (
    View("COLUMN_FIELD_PATHS", frozenset({"field_path"}), ("table_name", "column_name")),
    View("TABLE_OPTIONS", frozenset({"option_name", "option_value"}), ("table_name",)),
    View("REFERENTIAL_CONSTRAINTS", frozenset({"unique_constraint_name"}), ("constraint_name",)),
    View(
        "TABLE_CONSTRAINTS",
        frozenset({"constraint_type"}),
        ("constraint_name", "table_name"),
    ),
    View(
        "KEY_COLUMN_USAGE",
        frozenset({"constraint_name", "ordinal_position"}),
        ("table_name", "column_name"),
    ),
    View("CONSTRAINT_COLUMN_USAGE", frozenset({"constraint_name"}), ("table_name", "column_name")),
    View("COLUMNS", frozenset({"column_name"}), ("table_name",)),
    View("TABLES", frozenset({"table_name"}), ()),
)


def suffix_of(file: Path) -> str:
    suffixes = [s.lower() for s in file.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def stem_of(path: Path) -> str:
    name = path.resolve().name
    while Path(name).suffix.lower() in (*SUFFIXES, ".gz"):
        name = Path(name).stem
    return name


@dataclass
class ExportFile:
    """One exported file: the view it holds, its header (folded), its rows (each one longer
    than the header: its last value is "", where a column the file lacks is read from), the
    number of its first data row, the dialect of the engine that wrote it ("" when its layout
    does not say) and what reading it found wrong, as (kind, example)."""

    view: View
    header: list[str]
    rows: list[list[str]]
    first: int
    dialect: str
    problems: list[tuple[str, str]]


def read_export(file: Path) -> ExportFile:
    try:
        data = file.read_bytes()
        if file.suffix.lower() == ".gz":
            data = gzip.decompress(data)
    except EOFError:
        raise SourceError(
            f"{file}: cut off (the gzip stream ends before its end); copy or export it again"
        ) from None
    except (OSError, zlib.error) as exc:
        raise SourceError(f"{file}: cannot be read ({exc})") from None
    if b"\0" in data[:4096]:
        raise SourceError(f"{file}: not CSV or JSON text; {HELP}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SourceError(f"{file}: not UTF-8 text; export it as UTF-8 CSV or JSON lines") from None
    if not text.strip():
        raise SourceError(f"{file}: empty; {HELP}, with a header row, or remove the file")
    suffix = suffix_of(file)
    json_like = text.lstrip()[:1] in ("[", "{")
    problems: list[tuple[str, str]] = []
    if suffix in (".jsonl", ".ndjson", ".json") or (suffix not in SUFFIXES and json_like):
        header, rows = _json_rows(file, text)
        first = 1
    else:
        header, rows = _csv_rows(file, text, problems)
        first = 2
    view = _view(file, header)
    types = [header.index(k) for k in ("full_data_type", "data_type") if k in header][:1]
    dialect = file_dialect(view.name, header, (row[types[0]] for row in rows) if types else ())
    return ExportFile(view, header, rows, first, dialect, problems)


def _csv_rows(
    file: Path, text: str, problems: list[tuple[str, str]]
) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a CSV file. A row with fewer fields than the header (a file cut
    off mid-row), more fields, or a file that ends inside a quoted field, is left out and
    reported; so is a malformed quote, whose file is then read as written."""
    lines = _csv_lines(file, text, problems)
    if not lines:
        raise SourceError(f"{file}: empty; {HELP}, with a header row, or remove the file")
    (_, head), *body = lines
    header = [fold(clean(h)) for h in head]
    width = len(header)
    rows: list[list[str]] = []
    last = len(body) - 1
    last_whole = bool(body) and len(body[-1][1]) == width
    for index, (number, line) in enumerate(body):
        if len(line) == width:
            line.append("")  # the value of every column the export does not have
            rows.append(line)
        elif len(line) < width and index == last:
            problems.append(
                (
                    f"the file is cut off: its last row has {len(line)} of {width} fields and is "
                    "left out; export the view again",
                    f"row {number}",
                )
            )
        else:
            fewer = "fewer" if len(line) < width else "more"
            problems.append((f"rows with {fewer} fields than the header left out", f"row {number}"))
    if not problems and last_whole and not text.endswith(("\n", "\r")):
        problems.append(
            (
                "the file does not end with a line break: its last row may be cut off; check "
                "it or export the view again",
                f"row {body[-1][0]}",
            )
        )
    return header, rows


def _csv_lines(
    file: Path, text: str, problems: list[tuple[str, str]]
) -> list[tuple[int, list[str]]]:
    """The non-blank records of a CSV text with their row numbers (the header is row 1)."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:  # a BigQuery DDL is often longer than 128 KiB
        csv.field_size_limit(CSV_FIELD_LIMIT)
    lines: list[tuple[int, list[str]]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for record in reader:
            if "".join(record).strip():
                lines.append((len(lines) + 1, record))
    except csv.Error as exc:
        if not lines:
            raise SourceError(f"{file}: not readable CSV ({exc}); {HELP}") from None
        where = f"row {len(lines) + 1} (line {reader.line_num})"
        if "unexpected end of data" in str(exc):  # inside a quoted field
            problems.append(
                (
                    "the file is cut off inside a quoted field: its last row is left out; "
                    "export the view again",
                    where,
                )
            )
            return lines
        problems.append((f"malformed CSV ({exc}): the file is read as written; check it", where))
        lenient = (r for r in csv.reader(io.StringIO(text, newline="")) if "".join(r).strip())
        lines = list(enumerate(lenient, 1))
    return lines


def _json_rows(file: Path, text: str) -> tuple[list[str], list[list[str]]]:
    try:
        data = json.loads(text)
        items = data if isinstance(data, list) else [data]
        numbers = list(range(1, len(items) + 1))
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":  # JSON lines (BigQuery writes them with a .json suffix)
            raise SourceError(
                f"{file}: malformed JSON at line {exc.lineno}: {exc.msg}; {HELP}"
            ) from None
        items, numbers = [], []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as line_exc:
                raise SourceError(
                    f"{file}: malformed JSON at line {number}: {line_exc.msg}; one object a line"
                ) from None
            numbers.append(number)
    header: dict[str, None] = {}
    objects = []
    for number, item in zip(numbers, items, strict=True):
        if not isinstance(item, dict):
            raise SourceError(
                f"{file}: item {number} is {type(item).__name__}, not an object; write one "
                "object per row, keyed by column name"
            )
        row = {fold(clean(str(k))): _text(v) for k, v in item.items()}
        header.update(dict.fromkeys(row))
        objects.append(row)
    names = list(header)
    return names, [[*(row.get(name, "") for name in names), ""] for row in objects]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def _view(file: Path, header: list[str]) -> View:
    names = set(header)
    for view in _VIEWS:
        if view.marks <= names:
            missing = [c for c in view.required if c not in names]
            if missing:
                raise SourceError(
                    f"{file}: looks like an export of {view.name} but has no "
                    f"{' or '.join(missing)} column; export the view with its header"
                )
            return view
    found = ", ".join(h for h in header if h)[:120] or "nothing"
    raise SourceError(
        f"{file}: no table_name or column_name column in the header (found: {found}); {HELP}"
    )
