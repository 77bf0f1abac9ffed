"""Where a record of the question collection comes from: its payload's `origin` is `SYNTHETIC`
(written by a synthesizer; older builds have no origin, which means the same) or `USER` (a
user's example, `indexer.examples.records`)."""

from __future__ import annotations

ORIGIN = "origin"
USER = "user"
SYNTHETIC = "synthetic"
#: the `synthesizer` of a user record: the benchmark's leakage check refuses any record that
#: equals an evaluated question unless the template synthesizer wrote it
USER_SYNTHESIZER = "user"
