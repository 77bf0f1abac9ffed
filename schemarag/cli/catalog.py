"""`schemarag catalog show` and `schemarag graph stats|walks`."""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from schemagraph import (
    Catalog,
    Database,
    TraversalError,
    build_graph,
    compact_text,
    counted,
    create_table_text,
    enumerate_traversals,
    graph_stats,
    sample_database,
)
from schemagraph.traversals import walks_tried
from schemarag.cli.common import (
    add_command,
    add_sources,
    add_traversal_options,
    load_sources,
    print_json,
    traversal_config,
)


def register(sub: argparse._SubParsersAction) -> None:
    catalog = add_command(sub, "catalog")
    catalog_sub = catalog.add_subparsers(dest="catalog_command", metavar="COMMAND", required=True)
    show = catalog_sub.add_parser("show", help="databases, tables, columns and foreign keys")
    add_sources(show)
    show.add_argument("--db", action="append", metavar="ID", help="only this database (repeatable)")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(func=cmd_show)

    graph = add_command(sub, "graph")
    graph_sub = graph.add_subparsers(dest="graph_command", metavar="COMMAND", required=True)
    stats = graph_sub.add_parser("stats", help="node, edge and traversal counts")
    add_sources(stats)
    add_traversal_options(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=cmd_stats)

    walks = graph_sub.add_parser("walks", help="serialized traversals of one database")
    add_sources(walks)
    add_traversal_options(walks)
    walks.add_argument("--db", required=True, metavar="ID", help="the database")
    walks.add_argument("--limit", type=int, default=5, metavar="N", help="how many (default 5)")
    walks.add_argument("--rows", type=int, default=3, help="sampled rows per table (default 3)")
    walks.add_argument("--compact", action="store_true", help="one line per table, no rows")
    walks.set_defaults(func=cmd_walks)


def _selected(catalog: Catalog, ids: list[str] | None) -> list[Database]:
    return [catalog.database(i) for i in ids] if ids else list(catalog)


def database_dict(db: Database) -> dict[str, Any]:
    """`db` as `catalog show --json` writes it: its dialect, and each table's id with the name
    its engine reads (`sql_name`: `` `project.dataset.table` ``, `DB.SCHEMA.TABLE`)."""
    from schemagraph.dialects import dialect_of, table_sql

    return {
        "db_id": db.id,
        "origin": db.origin,
        "data": str(db.path) if db.path else db.origin if db.url else None,
        "dialect": dialect_of(db),
        "tables": [
            {
                "name": t.name,
                "sql_name": table_sql(db, t),
                "description": t.description,
                "columns": [
                    {
                        "name": c.name,
                        "type": c.type,
                        "primary_key": c.primary_key,
                        "description": c.description,
                    }
                    for c in t.columns
                ],
                "foreign_keys": [
                    {
                        "columns": list(fk.columns),
                        "ref_table": fk.ref_table,
                        "ref_columns": list(fk.ref_columns),
                    }
                    for fk in t.foreign_keys
                ],
            }
            for t in db.tables
        ],
    }


def cmd_show(args: argparse.Namespace) -> int:
    catalog = load_sources(args)
    dbs = _selected(catalog, args.db)
    if args.json:
        print_json(
            {"databases": [database_dict(db) for db in dbs], "problems": list(catalog.problems)}
        )
        return 0
    for db in dbs:  # a database's lines written at once: an estate has a million of them
        sys.stdout.write("".join(_database_lines(db)))
    fks = sum(1 for db in dbs for _ in db.foreign_keys)
    counts = [
        counted(len(dbs), "database"),
        counted(sum(len(db.tables) for db in dbs), "table"),
        counted(sum(len(t.columns) for db in dbs for t in db.tables), "column"),
        counted(fks, "foreign key"),
    ]
    print(f"{', '.join(counts)}; {counted(len(catalog.problems), 'problem')} reported")
    return 0


def _database_lines(db: Database) -> Iterator[str]:
    data = f", data {db.path}" if db.path else f", live {db.origin}" if db.url else ", no data"
    yield f"{db.id}  ({counted(len(db.tables), 'table')}{data})\n"
    for table in db.tables:
        cols = ", ".join(
            f"{c.name}{'*' if c.primary_key else ''} {c.type}".rstrip() for c in table.columns
        )
        yield f"  {table.name}: {cols}\n"
        if table.description:
            yield f"    -- {table.description}\n"
        for column in table.columns:
            if column.description:
                yield f"    {column.name}: {column.description}\n"
        for fk in table.foreign_keys:
            src, ref = ", ".join(fk.columns), ", ".join(fk.ref_columns)
            yield f"    FK ({src}) -> {fk.ref_table}({ref})\n"


def cmd_stats(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    catalog = load_sources(args)
    graph = build_graph(catalog)
    config = traversal_config(args)
    traversals = enumerate_traversals(graph, config)
    elapsed = time.perf_counter() - started
    stats = graph_stats(graph)
    sizes = Counter(len(t.tables) for t in traversals)
    kinds = Counter(t.kind for t in traversals)
    by_size = {str(k): sizes[k] for k in sorted(sizes)}
    report = {
        **stats.as_dict(),
        "traversals": len(traversals),
        "traversals_by_size": by_size,
        "traversals_by_kind": dict(sorted(kinds.items())),
        "walks_tried": walks_tried(graph, config),
        "skipped": len(catalog.problems),
        "seconds": round(elapsed, 3),
    }
    if args.json:
        print_json(report)
        return 0
    print(f"databases          {stats.databases}")
    print(f"tables             {stats.tables}")
    note = stats.foreign_key_note()
    print(f"foreign-key edges  {stats.foreign_key_edges}" + (f"  ({note})" if note else ""))
    print(f"nodes / edges      {stats.nodes} / {stats.edges}  (root + databases + tables)")
    sizes_text = ", ".join(f"{counted(int(k), 'table')}: {v}" for k, v in by_size.items())
    print(f"traversals         {len(traversals)}  ({sizes_text})")
    print(
        f"random walks       {report['walks_tried']} tried ({config.walks} per joined database),"
        f" {kinds['walk']} new (the others' tables were enumerated already)"
    )
    print(f"time               {elapsed:.2f} s")
    return 0


def cmd_walks(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise TraversalError(f"--limit must be >= 1, got {args.limit}")
    catalog = load_sources(args)
    db = catalog.database(args.db)
    graph = build_graph(catalog)
    traversals = enumerate_traversals(graph, traversal_config(args), [db.id])
    # Show the largest first: they are the interesting ones; singles follow.
    shown = sorted(traversals, key=lambda t: -len(t.tables))[: args.limit]
    sample = None if args.compact else sample_database(db, rows=args.rows, seed=args.seed)
    for i, traversal in enumerate(shown, 1):
        print(f"-- traversal {i}/{len(shown)} [{traversal.kind}] {' -> '.join(traversal.path)}")
        if args.compact:
            print(compact_text(db, traversal.tables))
        else:
            print(create_table_text(db, traversal.tables, sample, rows=args.rows))
        print()
    print(f"{len(shown)} of {len(traversals)} traversals of {db.id}")
    return 0
