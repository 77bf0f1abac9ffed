"""The users'-examples rule of `retriever.fusion`: a user example counts only when it is nearer
the question than every synthetic record, by how much nearer, and for its database by its share
of the user examples' votes."""

from __future__ import annotations

import numpy as np

from retriever.fusion import FusionWeights, Signals, fuse, user_nearest

# two databases of one table each; no signal but the users' examples
DB_OF = np.array([0, 1])
ZERO = np.zeros(2)
WEIGHTS = FusionWeights()


def scores(
    users: list[tuple[float, int]], synthetic_best: float, weights: FusionWeights = WEIGHTS
) -> tuple[list[float], ...]:
    """(database scores, table scores) with user hits (cosine, database = its table)."""
    cosines = [c for c, _ in users]
    dbs = [d for _, d in users]
    user_db, user_table, share = user_nearest(cosines, dbs, [[d] for d in dbs], 2, 2, 0.05)
    signals = Signals(
        table={"dense": ZERO, "bm25": ZERO, "names": ZERO, "values": ZERO},
        db_votes=ZERO,
        table_votes=ZERO,
        user_db=user_db,
        user_table=user_table,
        synthetic_best=synthetic_best,
        user_share=share,
    )
    db, table, _ = fuse(signals, DB_OF, 2, weights)
    return db.round(6).tolist(), table.round(6).tolist()


def test_only_examples_nearer_than_every_synthetic_record_count() -> None:
    assert scores([(0.70, 0)], synthetic_best=0.80) == ([0.0, 0.0], [0.0, 0.0])
    assert scores([(0.80, 0)], synthetic_best=0.80) == ([0.0, 0.0], [0.0, 0.0])
    # nearer by half the width: half the weight; by the width or more: all of it
    assert scores([(0.90, 0)], synthetic_best=0.80) == ([0.5, 0.0], [0.5, 0.0])
    assert scores([(0.95, 0)], synthetic_best=0.70) == ([1.0, 0.0], [1.0, 0.0])


def test_a_database_counts_by_its_share_of_the_user_votes_squared() -> None:
    # two equally near examples of two databases: each has half the votes, so a quarter counts
    db, table = scores([(0.95, 0), (0.95, 1)], synthetic_best=0.70)
    assert db == [0.25, 0.25] and table == [1.0, 1.0]
    # without the vote share, both count in full
    no_share = FusionWeights(user_consensus=0.0)
    assert scores([(0.95, 0), (0.95, 1)], 0.70, no_share) == ([1.0, 1.0], [1.0, 1.0])
