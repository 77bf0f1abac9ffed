"""Index builds: a plan against the served build, then the steps that carry it out.

- `plan`             `plan_build`: what to synthesize, carry over, remove and rewrite (pure);
- `run`              `build_index`: the plan, then the steps in order;
- `synthesize`       synthesis in threads or forked processes, embedding, the journal;
- `load`             the collections from the base build and the journal, and the snapshot;
- `report`           what a build did (`BuildReport`);
- `manifest`         what a build holds (`Manifest`), read by the next build and by readers;
- `publish`          start or resume a build, publish it (CURRENT, PENDING, pruning), discard it;
- `config`           `BuildConfig`, `BuildServices`;
- `layout`           `CollectionLayout`: how a Qdrant server holds the collections;
- `journal`          per-batch journal of synthesized records, so a killed build resumes;
- `table_documents`  one document per table (what the table signal searches);
- `snapshot`         a build's collections as flat files for readers;
- `location`         where a store lives, its pointers, its build lock and pruning;
- `status`           what a store serves, from its manifest;
- `metered`          provider wrappers that count calls and usage.
"""
