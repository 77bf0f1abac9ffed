"""A seeded generator of enterprise-like estates, for the scale benchmark
(`benchmarks/bench_estate.py`).

Real estates are not Spider: many domains, abbreviated and prefixed names (`cust_acct_bal`,
`dim_customer`), tables of hundreds of columns next to narrow ones, date-sharded families
(`events_20240101`, `events_20240102`, ...), staging and archive copies, tenant copies with the
same schema and different values (`shop_eu`, `shop_us`). `generate_estate` writes such an estate
in the Spider layout (`tables.json` plus `database/<db>/<db>.sqlite` with a few sampled rows per
table), so `spider:OUT` loads it with its values like any other source.

Every choice is drawn from `random.Random(spec.seed)`: the same spec writes the same files.
The knobs (`EstateSpec`) say what share of databases or tables gets each trait.
"""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from schemagraph.errors import SourceError

#: domain -> entity -> attributes (name, type); the first attribute of each entity is its name
DOMAINS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "retail": {
        "customer": [
            ("customer_name", "text"),
            ("email", "text"),
            ("city", "text"),
            ("account_balance", "number"),
            ("signup_date", "time"),
        ],
        "product": [
            ("product_name", "text"),
            ("category", "text"),
            ("unit_price", "number"),
            ("stock_quantity", "number"),
        ],
        "store": [
            ("store_name", "text"),
            ("city", "text"),
            ("region", "text"),
            ("opened_date", "time"),
        ],
        "order": [
            ("order_number", "text"),
            ("order_date", "time"),
            ("total_amount", "number"),
            ("status", "text"),
        ],
        "payment": [("payment_method", "text"), ("amount", "number"), ("payment_date", "time")],
    },
    "healthcare": {
        "patient": [
            ("patient_name", "text"),
            ("date_of_birth", "time"),
            ("gender", "text"),
            ("city", "text"),
        ],
        "physician": [("physician_name", "text"), ("specialty", "text"), ("department", "text")],
        "visit": [("visit_date", "time"), ("reason", "text"), ("length_of_stay", "number")],
        "lab_result": [
            ("test_name", "text"),
            ("result_value", "number"),
            ("reference_range", "text"),
            ("collected_date", "time"),
        ],
        "prescription": [("drug_name", "text"), ("dosage", "text"), ("quantity", "number")],
    },
    "finance": {
        "account": [
            ("account_number", "text"),
            ("account_type", "text"),
            ("balance", "number"),
            ("opened_date", "time"),
        ],
        "branch": [("branch_name", "text"), ("city", "text"), ("manager_name", "text")],
        "transaction": [
            ("transaction_date", "time"),
            ("amount", "number"),
            ("transaction_type", "text"),
            ("description", "text"),
        ],
        "loan": [
            ("loan_type", "text"),
            ("principal_amount", "number"),
            ("interest_rate", "number"),
            ("start_date", "time"),
        ],
        "card": [
            ("card_number", "text"),
            ("card_type", "text"),
            ("credit_limit", "number"),
            ("expiry_date", "time"),
        ],
    },
    "logistics": {
        "warehouse": [("warehouse_name", "text"), ("city", "text"), ("capacity", "number")],
        "shipment": [
            ("tracking_number", "text"),
            ("ship_date", "time"),
            ("weight", "number"),
            ("status", "text"),
        ],
        "carrier": [("carrier_name", "text"), ("service_level", "text"), ("rating", "number")],
        "route": [
            ("route_code", "text"),
            ("origin_city", "text"),
            ("destination_city", "text"),
            ("distance", "number"),
        ],
        "vehicle": [("plate_number", "text"), ("vehicle_type", "text"), ("capacity", "number")],
    },
    "hr": {
        "employee": [
            ("employee_name", "text"),
            ("hire_date", "time"),
            ("job_title", "text"),
            ("salary", "number"),
        ],
        "department": [("department_name", "text"), ("budget", "number"), ("location", "text")],
        "position": [("position_title", "text"), ("grade", "text"), ("min_salary", "number")],
        "leave_request": [("leave_type", "text"), ("start_date", "time"), ("days", "number")],
        "review": [("review_date", "time"), ("score", "number"), ("comments", "text")],
    },
    "marketing": {
        "campaign": [
            ("campaign_name", "text"),
            ("channel", "text"),
            ("budget", "number"),
            ("start_date", "time"),
        ],
        "lead": [
            ("lead_name", "text"),
            ("source", "text"),
            ("score", "number"),
            ("created_date", "time"),
        ],
        "ad": [
            ("headline", "text"),
            ("impressions", "number"),
            ("clicks", "number"),
            ("cost", "number"),
        ],
        "audience": [("segment_name", "text"), ("size", "number"), ("region", "text")],
    },
    "manufacturing": {
        "plant": [("plant_name", "text"), ("city", "text"), ("capacity", "number")],
        "machine": [("machine_model", "text"), ("install_date", "time"), ("hours_run", "number")],
        "work_order": [
            ("work_order_number", "text"),
            ("due_date", "time"),
            ("quantity", "number"),
            ("status", "text"),
        ],
        "part": [("part_name", "text"), ("material", "text"), ("unit_cost", "number")],
        "defect": [("defect_type", "text"), ("severity", "text"), ("detected_date", "time")],
    },
    "education": {
        "student": [
            ("student_name", "text"),
            ("enrollment_date", "time"),
            ("major", "text"),
            ("gpa", "number"),
        ],
        "course": [("course_title", "text"), ("credits", "number"), ("department", "text")],
        "instructor": [("instructor_name", "text"), ("rank", "text"), ("hire_date", "time")],
        "enrollment": [("semester", "text"), ("grade", "text")],
        "exam": [("exam_date", "time"), ("max_score", "number"), ("exam_type", "text")],
    },
    "telecom": {
        "subscriber": [
            ("subscriber_name", "text"),
            ("phone_number", "text"),
            ("plan_name", "text"),
            ("activation_date", "time"),
        ],
        "call_record": [
            ("call_start", "time"),
            ("duration_seconds", "number"),
            ("call_type", "text"),
        ],
        "plan": [("plan_title", "text"), ("monthly_fee", "number"), ("data_allowance", "number")],
        "cell_tower": [("tower_code", "text"), ("city", "text"), ("technology", "text")],
        "invoice": [("invoice_number", "text"), ("billing_date", "time"), ("amount_due", "number")],
    },
    "insurance": {
        "policy": [
            ("policy_number", "text"),
            ("policy_type", "text"),
            ("premium", "number"),
            ("start_date", "time"),
        ],
        "claim": [
            ("claim_number", "text"),
            ("claim_date", "time"),
            ("claim_amount", "number"),
            ("status", "text"),
        ],
        "agent": [("agent_name", "text"), ("office", "text"), ("commission_rate", "number")],
        "policyholder": [("holder_name", "text"), ("date_of_birth", "time"), ("city", "text")],
    },
    "hospitality": {
        "hotel": [("hotel_name", "text"), ("city", "text"), ("star_rating", "number")],
        "room": [("room_number", "text"), ("room_type", "text"), ("nightly_rate", "number")],
        "reservation": [("check_in_date", "time"), ("nights", "number"), ("total_price", "number")],
        "guest": [("guest_name", "text"), ("country", "text"), ("loyalty_tier", "text")],
    },
    "energy": {
        "meter": [("meter_serial", "text"), ("install_date", "time"), ("meter_type", "text")],
        "reading": [
            ("reading_date", "time"),
            ("kilowatt_hours", "number"),
            ("peak_demand", "number"),
        ],
        "site": [("site_name", "text"), ("city", "text"), ("capacity_megawatts", "number")],
        "outage": [("outage_start", "time"), ("duration_minutes", "number"), ("cause", "text")],
    },
}

#: word -> abbreviation, as warehouses write them
ABBREVIATIONS = {
    "customer": "cust",
    "account": "acct",
    "balance": "bal",
    "number": "nbr",
    "quantity": "qty",
    "amount": "amt",
    "transaction": "txn",
    "department": "dept",
    "description": "desc",
    "employee": "emp",
    "product": "prod",
    "date": "dt",
    "address": "addr",
    "payment": "pmt",
    "reference": "ref",
    "value": "val",
    "total": "tot",
    "patient": "pat",
    "physician": "phys",
    "warehouse": "whse",
    "shipment": "shpmt",
    "subscriber": "sub",
    "reservation": "resv",
    "duration": "dur",
    "seconds": "sec",
    "minutes": "min",
    "average": "avg",
    "category": "cat",
    "interest": "int",
    "principal": "prin",
    "enrollment": "enrl",
    "instructor": "instr",
    "status": "stat",
    "invoice": "inv",
    "policy": "pol",
    "machine": "mach",
    "result": "rslt",
}
PREFIXES = ("dim_", "fct_", "tbl_", "stg_", "t_")
#: measures and dimensions that wide tables repeat per period
WIDE_STEMS = ("revenue", "cost", "units", "margin", "visits", "returns", "score", "count")
WIDE_PERIODS = tuple(f"{p}{i}" for p in ("m", "q", "w") for i in range(1, 53))
FIRST = (
    "Ana",
    "Ben",
    "Chen",
    "Dara",
    "Eli",
    "Fatima",
    "Goran",
    "Hana",
    "Ivan",
    "Jia",
    "Kofi",
    "Lena",
)
LAST = ("Ito", "Okafor", "Novak", "Silva", "Berg", "Haddad", "Kim", "Moreau", "Rossi", "Singh")
#: tenant -> the cities its rows hold, so tenant copies differ by value
TENANT_CITIES = {
    "eu": ("Lyon", "Porto", "Gdansk", "Utrecht", "Bologna"),
    "us": ("Denver", "Tampa", "Omaha", "Fresno", "Tulsa"),
    "apac": ("Osaka", "Perth", "Cebu", "Pune", "Busan"),
    "latam": ("Cusco", "Rosario", "Merida", "Cali", "Recife"),
}
WORDS = (
    "alpha",
    "north",
    "prime",
    "basic",
    "gold",
    "silver",
    "open",
    "closed",
    "active",
    "pending",
)


@dataclass(frozen=True)
class EstateSpec:
    """What to generate. Shares are probabilities per database (or per table for `wide_share`
    and `abbreviate`), drawn from `random.Random(seed)`."""

    databases: int
    seed: int = 0
    #: entity tables per database
    tables: tuple[int, int] = (3, 8)
    #: share of tables that are wide, and their column counts
    wide_share: float = 0.1
    wide_columns: tuple[int, int] = (100, 400)
    #: share of names written abbreviated (`cust_acct_bal`), and of tables given a prefix
    abbreviate: float = 0.3
    prefixed: float = 0.2
    #: share of databases holding a date-sharded table family, and its member counts
    sharded: float = 0.1
    shards: tuple[int, int] = (5, 40)
    #: share of databases that come as tenant copies (2 to 4 tenants: same schema, other values)
    tenant_share: float = 0.05
    #: share of databases that come with a staging or archive copy (one column apart)
    staging_share: float = 0.05
    #: rows written per table (the values the value index samples)
    rows: int = 5

    def __post_init__(self) -> None:
        if self.databases < 1:
            raise SourceError(f"an estate needs at least one database, got {self.databases}")
        for name in (
            "wide_share",
            "abbreviate",
            "prefixed",
            "sharded",
            "tenant_share",
            "staging_share",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise SourceError(f"{name} is a share between 0 and 1, got {value}")
        for name in ("tables", "wide_columns", "shards"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                raise SourceError(f"{name} must be a range 1 <= low <= high, got {(low, high)}")


@dataclass
class EstateSummary:
    """What was written: counts per trait, and the groups a benchmark can check against."""

    databases: int = 0
    tables: int = 0
    columns: int = 0
    wide_tables: int = 0
    families: dict[str, list[str]] = field(default_factory=dict)  # "db.stem" -> member tables
    tenant_groups: list[list[str]] = field(default_factory=list)
    staging_pairs: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "databases": self.databases,
            "tables": self.tables,
            "columns": self.columns,
            "wide_tables": self.wide_tables,
            "families": len(self.families),
            "family_members": sum(len(m) for m in self.families.values()),
            "tenant_groups": len(self.tenant_groups),
            "staging_pairs": len(self.staging_pairs),
        }


@dataclass
class _Table:
    name: str
    columns: list[tuple[str, str]]  # (name, type); the first is the primary key
    parent: int | None = None  # index of the referenced table (FK on column 1)


def generate_estate(spec: EstateSpec, out: Path, *, prefix: str = "est") -> EstateSummary:
    """Write the estate `spec` describes under `out` (tables.json and database/); see the module
    docstring. Database ids are `{prefix}_{n:05d}_{domain}` plus a tenant or copy suffix."""
    rng = random.Random(spec.seed)
    out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    summary = EstateSummary()
    number = 0
    while summary.databases < spec.databases:
        domain = rng.choice(sorted(DOMAINS))
        base = f"{prefix}_{number:05d}_{domain}"
        number += 1
        tables = _schema(rng, spec, domain)
        left = spec.databases - summary.databases
        copies: list[tuple[str, str | None]] = [(base, None)]
        roll = rng.random()
        if roll < spec.tenant_share and left >= 2:
            tenants = sorted(rng.sample(sorted(TENANT_CITIES), min(left, rng.randint(2, 4))))
            copies = [(f"{base}_{t}", t) for t in tenants]
            summary.tenant_groups.append([c for c, _ in copies])
        elif roll < spec.tenant_share + spec.staging_share and left >= 2:
            copies = [(base, None), (f"{base}_{rng.choice(('staging', 'archive'))}", None)]
            summary.staging_pairs.append((copies[0][0], copies[1][0]))
        for i, (db_id, tenant) in enumerate(copies):
            schema = tables
            if i == 1 and summary.staging_pairs and summary.staging_pairs[-1][1] == db_id:
                schema = _staging_copy(tables)
            cities = (
                TENANT_CITIES[tenant]
                if tenant
                else TENANT_CITIES[rng.choice(sorted(TENANT_CITIES))]
            )
            entries.append(_entry(db_id, schema))
            _write_sqlite(
                out / "database" / db_id / f"{db_id}.sqlite", schema, rng, spec.rows, cities
            )
            summary.databases += 1
            summary.tables += len(schema)
            summary.columns += sum(len(t.columns) for t in schema)
            summary.wide_tables += sum(len(t.columns) >= spec.wide_columns[0] for t in schema)
            for table in schema:
                stem, _, day = table.name.rpartition("_")
                if day.isdigit() and len(day) == 8:
                    summary.families.setdefault(f"{db_id}.{stem}", []).append(table.name)
    (out / "tables.json").write_text(json.dumps(entries, indent=1))
    return summary


def _name(rng: random.Random, words: str, share: float) -> str:
    """`words` (snake case), each known word abbreviated with probability `share` (decided once
    per name, so a name is either written out or abbreviated)."""
    if rng.random() >= share:
        return words
    return "_".join(ABBREVIATIONS.get(w, w) for w in words.split("_"))


def _schema(rng: random.Random, spec: EstateSpec, domain: str) -> list[_Table]:
    entities = sorted(DOMAINS[domain])
    count = min(rng.randint(*spec.tables), len(entities))
    chosen = rng.sample(entities, count)
    tables: list[_Table] = []
    for i, entity in enumerate(chosen):
        name = _name(rng, entity, spec.abbreviate)
        if rng.random() < spec.prefixed:
            name = rng.choice(PREFIXES) + name
        columns = [(f"{name}_id", "number")]
        parent = rng.randrange(i) if i and rng.random() < 0.8 else None
        if parent is not None:
            columns.append((tables[parent].columns[0][0], "number"))
        columns += [(_name(rng, a, spec.abbreviate), t) for a, t in DOMAINS[domain][entity]]
        if rng.random() < spec.wide_share:
            width = rng.randint(*spec.wide_columns)
            stems = [_name(rng, s, spec.abbreviate) for s in WIDE_STEMS]
            extra = [f"{p}_{s}" for p in WIDE_PERIODS for s in stems]
            columns += [(c, "number") for c in extra[: max(0, width - len(columns))]]
        tables.append(_Table(name, _unique(columns), parent))
    if rng.random() < spec.sharded:
        stem = rng.choice(("events", "sessions", "clicks", "logs", "ga_sessions"))
        start = date(2024, 1, 1) + timedelta(days=rng.randrange(365))
        columns = [
            ("event_id", "number"),
            ("event_time", "time"),
            ("user_id", "number"),
            ("event_name", "text"),
            ("page", "text"),
        ]
        for day in range(rng.randint(*spec.shards)):
            tables.append(_Table(f"{stem}_{(start + timedelta(days=day)):%Y%m%d}", list(columns)))
    return tables


def _unique(columns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen: set[str] = set()
    kept = []
    for name, kind in columns:
        if name.lower() not in seen:
            seen.add(name.lower())
            kept.append((name, kind))
    return kept


def _staging_copy(tables: list[_Table]) -> list[_Table]:
    """The same tables, the first one with an extra load-audit column."""
    copy = [_Table(t.name, list(t.columns), t.parent) for t in tables]
    copy[0].columns.append(("loaded_at", "time"))
    return copy


def _entry(db_id: str, tables: list[_Table]) -> dict[str, Any]:
    columns: list[list[Any]] = [[-1, "*"]]
    types = ["text"]
    primary: list[int] = []
    foreign: list[list[int]] = []
    first: list[int] = []
    for t, table in enumerate(tables):
        first.append(len(columns))
        for name, kind in table.columns:
            columns.append([t, name])
            types.append(kind)
        primary.append(first[t])
        if table.parent is not None:
            foreign.append([first[t] + 1, first[table.parent]])
    return {
        "db_id": db_id,
        "table_names_original": [t.name for t in tables],
        "table_names": [t.name.replace("_", " ") for t in tables],
        "column_names_original": columns,
        "column_names": [[t, n.replace("_", " ")] for t, n in columns],
        "column_types": types,
        "primary_keys": primary,
        "foreign_keys": foreign,
    }


def _value(rng: random.Random, column: str, kind: str, row: int, cities: tuple[str, ...]) -> Any:
    if kind == "number":
        return row + 1 if column.endswith("_id") else round(rng.uniform(1, 5000), 2)
    if kind == "time":
        return f"{date(2020, 1, 1) + timedelta(days=rng.randrange(2000)):%Y-%m-%d}"
    if "city" in column or column in ("location", "office", "region"):
        return rng.choice(cities)
    if "name" in column or column.endswith("_nm"):
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    return f"{rng.choice(WORDS)}-{rng.randrange(100)}"


def _write_sqlite(
    path: Path, tables: list[_Table], rng: random.Random, rows: int, cities: tuple[str, ...]
) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as con:
        for table in tables:
            types = {"number": "REAL", "time": "TEXT", "text": "TEXT"}
            ddl = ", ".join(f'"{n}" {types[k]}' for n, k in table.columns)
            con.execute(
                f'CREATE TABLE "{table.name}" ({ddl}, PRIMARY KEY ("{table.columns[0][0]}"))'
            )
            marks = ", ".join("?" * len(table.columns))
            con.executemany(
                f'INSERT INTO "{table.name}" VALUES ({marks})',
                [[_value(rng, n, k, r, cities) for n, k in table.columns] for r in range(rows)],
            )
    con.close()
