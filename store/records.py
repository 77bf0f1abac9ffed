"""Where a record of the question collection comes from: its payload's `origin` is `SYNTHETIC`
(written by a synthesizer; older builds have no origin, which means the same), `USER` (a
user's example, `indexer.examples.records`) or `ROUTING` (a routing key: on a warehouse, the
pair synthesized as for SQLite, whose question names the schema's words; it votes for its
database and tables, and is never shown, its SQL not being the engine's:
`indexer.building.synthesize`)."""

from __future__ import annotations

ORIGIN = "origin"
USER = "user"
SYNTHETIC = "synthetic"
ROUTING = "routing"
#: the `synthesizer` of a user record: the benchmark's leakage check refuses any record that
#: equals an evaluated question unless the template synthesizer wrote it
USER_SYNTHESIZER = "user"
