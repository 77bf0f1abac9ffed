"""Pull one SQL query out of a model's reply, however it was wrapped.

Models answer with a fenced code block (```sql, ```SQL, ``` or ~~~), a JSON object
(`{"sql": "..."}`), a line such as `SQL: SELECT ...`, or SQL inside prose. `extract_sql` tries
those in that order and returns the query without a trailing semicolon. A reply that holds no
query but a statement (a code block or a line starting `DROP TABLE ...`, `PRAGMA ...`) gives that
statement, so that the guard refuses it by name instead of the reply seeming empty; None when
the reply holds neither. It never raises and never parses with sqlglot: whether the SQL is
valid and allowed is the guard's and the execution critic's business.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(
    r"(?P<fence>```|~~~)[ \t]*(?P<lang>[A-Za-z0-9_+-]*)[^\n]*\n(?P<body>.*?)(?P=fence)",
    re.DOTALL,
)
_START = re.compile(r"\b(SELECT|WITH)\b", re.IGNORECASE)
_LINE_START = re.compile(
    r"(?:^|\n)[ \t>*_`]*(?:(?:sql|query|answer)\s*[:=]\s*)?(SELECT|WITH)\b", re.IGNORECASE
)
_CTE = re.compile(r"WITH\s+(RECURSIVE\s+)?[\w\"`\[\]]+\s*(\([^)]*\))?\s*AS\s*\(", re.IGNORECASE)
_STATEMENT_LINE = re.compile(
    r"(?:^|\n)[ \t>*_`]*(?:(?i:sql|query|answer)\s*[:=]\s*)?"
    r"((?:ALTER|ATTACH|BEGIN|COMMIT|COPY|CREATE|DELETE|DETACH|DROP|EXPLAIN|GRANT|INSERT|PRAGMA"
    r"|REINDEX|RELEASE|REPLACE|ROLLBACK|SAVEPOINT|SET|TRUNCATE|UPDATE|VACUUM)\b(?![:-]))",
)
# Prose that starts with a lower-case "select": "select the `Name` column from ...", or more
# than one sentence ("... from the table. The WHERE clause ...").
_PROSE = re.compile(r"(?i:^select\s+(?:all\s+)?(?:the|an)\s)|[.!?]\s+[A-Z]")
_JSON_KEYS = ("sql", "query", "SQL", "answer")
_SQL_LANGS = {"", "sql", "sqlite", "postgresql", "mysql", "bigquery", "googlesql", "snowflake"}


def extract_sql(reply: str) -> str | None:
    """The SQL query in `reply` (see the module docstring), or None."""
    if not isinstance(reply, str) or not reply.strip():
        return None
    for finder in (_from_fences, _from_json, _from_text, _not_a_query):
        sql = finder(reply)
        if sql:
            return sql
    return None


def _from_fences(reply: str) -> str | None:
    blocks = [(m["lang"].lower(), m["body"]) for m in _FENCE.finditer(reply) if m["body"].strip()]
    for lang, body in blocks:
        if lang in _SQL_LANGS and _looks_like_query(body):
            return _statement(body)
    for lang, body in blocks:
        if lang == "json":
            found = _from_json(body)
            if found:
                return found
    return None


def _from_json(reply: str) -> str | None:
    start = reply.find("{")
    while start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(reply, start)
        except ValueError:
            start = reply.find("{", start + 1)
            continue
        if isinstance(value, dict):
            for key in _JSON_KEYS:
                text = value.get(key)
                if isinstance(text, str) and _looks_like_query(text):
                    return _statement(text)
        start = reply.find("{", start + 1)
    return None


def _from_text(reply: str) -> str | None:
    """Candidate starts, best first: a line that begins with the query (perhaps after `SQL:`),
    then an upper-case SELECT / WITH anywhere, then any case; the first that looks like a
    query wins. The query ends at a `;` or at a blank line (prose follows)."""
    starts = [m.start(1) for m in _LINE_START.finditer(reply)]
    starts += [m.start(1) for m in _START.finditer(reply) if m.group(1).isupper()]
    starts += [m.start(1) for m in _START.finditer(reply)]
    seen: set[int] = set()
    for start in starts:
        if start in seen:
            continue
        seen.add(start)
        paragraph = re.split(r"\n[ \t]*\n", reply[start:], maxsplit=1)[0]
        sql = _statement(paragraph)
        if sql and _plausible(sql):
            return sql
    return None


def _not_a_query(reply: str) -> str | None:
    """A statement that is not a query: the body of a SQL code block, or an upper-case line."""
    for match in _FENCE.finditer(reply):
        if match["lang"].lower() in _SQL_LANGS and _STATEMENT_LINE.match(match["body"].strip()):
            return _statement(match["body"])
    found = _STATEMENT_LINE.search(reply)
    if found is None:
        return None
    paragraph = re.split(r"\n[ \t]*\n", reply[found.start(1) :], maxsplit=1)[0]
    return _statement(paragraph)


def _plausible(sql: str) -> bool:
    """A query, not prose that happens to start with "select" or "with"."""
    if _CTE.match(sql):
        return True
    if sql[:6].upper() != "SELECT":
        return False
    if sql[:6] == "SELECT":
        return True
    return bool(re.search(r"\bFROM\b", sql, re.IGNORECASE)) and not _PROSE.search(sql)


def _looks_like_query(text: str) -> bool:
    body = _strip_leading_comments(text)
    return bool(re.match(r"\(*\s*(SELECT|WITH)\b", body, re.IGNORECASE))


def _strip_leading_comments(text: str) -> str:
    body = text.strip()
    while True:
        if body.startswith("--"):
            newline = body.find("\n")
            body = "" if newline < 0 else body[newline + 1 :].lstrip()
        elif body.startswith("/*"):
            end = body.find("*/")
            body = "" if end < 0 else body[end + 2 :].lstrip()
        else:
            return body


def _statement(text: str) -> str | None:
    """The first statement of `text`: up to the first `;` outside quotes, trimmed."""
    body = _strip_leading_comments(text)
    quote: str | None = None
    for index, char in enumerate(body):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"`":
            quote = char
        elif char == ";":
            body = body[:index]
            break
    body = body.strip().rstrip("`").strip()
    return body or None
