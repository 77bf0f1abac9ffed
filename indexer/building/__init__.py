"""Index builds: a plan against the served build, then the steps that carry it out.

- `plan`             `plan_build`: what to synthesize, carry over, remove and rewrite (pure);
- `run`              `build_index`: the plan, then the steps in order;
- `synthesize`       synthesis in threads or forked processes, embedding, the journal;
- `load`             the collections from the base build and the journal, and the snapshot;
- `report`           what a build did (`BuildReport`);
- `publish`          start or resume a build, publish it (CURRENT, PENDING, pruning), discard it;
- `config`           `BuildConfig`, `BuildServices`;
- `journal`          per-batch journal of synthesized records, so a killed build resumes;
- `status`           what a store serves, from its manifest;
- `metered`          provider wrappers that count calls and usage.
"""
