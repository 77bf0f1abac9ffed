"""The help of every command that reads sources names every kind of source the README
documents: its sources table, the live database URLs and `env:NAME`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from schemarag.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
COMMANDS = (["catalog", "show"], ["index", "build"], ["bench", "recall"])


def documented_kinds() -> list[str]:
    """The specs in the first column of the README's sources table (`spider:DIR`,
    `ddl[DIALECT]:PATH`, ...) and the live sources' `env:NAME`."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| source | reads |") :].split("\n\n", 1)[0]
    specs = [
        spec
        for row in table.splitlines()[2:]
        for spec in re.findall(r"`([^`]+)`", row.split("|")[1])
    ]
    live = text[text.index("### Live sources") :].split("```", 1)[0]
    assert "SQLAlchemy URL" in live
    specs += re.findall(r"`(env:[A-Z]+)`", live)
    return specs


def test_the_readme_table_is_read() -> None:
    kinds = documented_kinds()
    assert {"spider:DIR", "docs:PATH", "dbt:PATH", "env:NAME"} <= set(kinds)
    assert len(kinds) >= 9


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_names_every_documented_source_kind(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit:
        main([*command, "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    missing = [kind for kind in documented_kinds() if kind not in out]
    assert not missing, f"{' '.join(command)} --help does not name {missing}"
    assert "postgresql://" in out  # a live database's URL
