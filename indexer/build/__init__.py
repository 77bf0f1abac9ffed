"""Index builds: a plan against the served build, then the steps that carry it out.

- `run`              `build_index`: the build's settings and its steps, in order;
- `journal`          per-batch journal of synthesized records, so a killed build resumes;
- `table_documents`  one document per table (what the table signal searches);
- `snapshot`         a build's collections as flat files for readers;
- `report`           what a build did (`BuildReport`);
- `location`         where a store lives, its pointers (CURRENT, PENDING), lock and pruning;
- `status`           what a store serves, from its manifest;
- `metered`          provider wrappers that count calls and usage.
"""
