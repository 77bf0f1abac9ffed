"""Counts in messages: "1 database", "2 databases"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, plural unless the count is one (`plural` when not noun + "s")."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
