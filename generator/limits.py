"""Limits on the questions generation reads (checked by the CLI and the HTTP API before any
model or index is loaded)."""

#: the longest question read, in characters
MAX_QUESTION_CHARS = 4000
