"""Render the benchmark report from the result files (benchmarks/results/*.json).

Writes, between marker comments, docs/BENCHMARKS.md's current-results tables and the README's
short table, and the recall@k plots (docs/img/recall-*.svg) from the results' curves.
`--check` writes nothing and exits 1 when a document or plot differs from what the result files
render, so the figures in the documents are the figures measured.

    .venv/bin/python benchmarks/render_report.py          # after a benchmark wrote its result
    .venv/bin/python benchmarks/render_report.py --check  # CI (tests/docs/test_report.py)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.metrics import METRIC_KEYS
from evaluation.recall import METHODS

REPO = Path(__file__).resolve().parent.parent
Result = dict[str, Any]

# recall pools in the order the report lists them; other recall files follow by name
RECALL_ORDER = (
    "recall-spider-dev",
    "recall-spider-syn",
    "recall-spider-dk",
    "recall-bird",
    "recall-spider2lite-dev",
    "recall-spider2lite-dev-docs",
)
#: the recall metrics shown (all but tab_R@20, which the curves show)
RECALL_COLUMNS = tuple(k for k in METRIC_KEYS if k != "tab_R@20")
COLORS = {"schemarag": "#1f77b4", "bm25_table": "#ff7f0e", "dense_table": "#2ca02c"}


class ReportError(Exception):
    """A result file or a document the report cannot be rendered from or into."""


@dataclass(frozen=True)
class Results:
    """The result files of a folder, by file stem."""

    files: dict[str, Result]

    @classmethod
    def read(cls, folder: Path) -> Results:
        if not folder.is_dir():
            raise ReportError(f"no results folder {folder}: pass --results DIR")
        files = {}
        for path in sorted(folder.glob("*.json")):
            try:
                data = json.loads(path.read_text())
            except json.JSONDecodeError as error:
                raise ReportError(f"{path} is not JSON ({error}): fix or remove it") from None
            if not isinstance(data, dict) or "benchmark" not in data:
                raise ReportError(f'{path} has no "benchmark" field: not a result file')
            files[path.stem] = data
        return cls(files)

    def of(self, benchmark: str) -> list[tuple[str, Result]]:
        """The results of one benchmark kind, recall pools in report order."""
        found = [(stem, r) for stem, r in self.files.items() if r["benchmark"] == benchmark]
        rank = {stem: i for i, stem in enumerate(RECALL_ORDER)}
        return sorted(found, key=lambda item: (rank.get(item[0], len(rank)), item[0]))


def number(value: Any, digits: int = 1) -> str:
    """A figure as the report prints it: thousands separated, `digits` decimals for floats,
    a [low, high] pair as a range."""
    if value is None:
        return ""
    if isinstance(value, list):
        low, high = (number(v, digits) for v in value)
        return low if low == high else f"{low}-{high}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def table(
    header: Iterable[str], rows: Iterable[Iterable[str]], numeric_from: int = 1, text: int = 0
) -> str:
    """A Markdown table; columns from `numeric_from` on are right-aligned, but the last `text`."""
    head = list(header)
    align = [
        "---" if i < numeric_from or i >= len(head) - text else "---:" for i in range(len(head))
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(item: Result, fallback: Result | None = None) -> str:
    """`commit`, date and command of a measurement, for the lines under a table."""
    base = fallback or {}
    commit = item.get("commit", base.get("commit", "?"))
    date = str(item.get("date", base.get("date", "?")))[:10]
    command = item.get("command", base.get("command", ""))
    return f"{commit}, {date}: `{command}`"


def render_recall(results: Results) -> str:
    pools = results.of("recall")
    if not pools:
        return "(no recall results)"
    header = ["pool", "method", *RECALL_COLUMNS, "p50 ms", "p99 ms"]
    rows = []
    for _, result in pools:
        name = result.get("label", result.get("dataset", "?"))
        pool = f"{name} ({number(result['questions'])} q, {number(result['databases'])} db)"
        for method in METHODS:
            figures = result["methods"].get(method)
            if figures is None:
                continue
            cells = [number(figures.get(column)) for column in RECALL_COLUMNS]
            if method == "schemarag":
                cells = [f"**{c}**" if c else c for c in cells]
            rows.append(
                [
                    pool if method == METHODS[0] else "",
                    method,
                    *cells,
                    number(figures.get("latency_ms_p50")),
                    number(figures.get("latency_ms_p99")),
                ]
            )
    lines = [table(header, rows, numeric_from=2), ""]
    for stem, result in pools:
        lines.append(
            f"- {result.get('label', stem)}: {provenance(result)} "
            f"({result.get('embedder', '?')}, {result.get('precision', '?')})."
        )
    machines = sorted({str(r.get("machine", "?")) for _, r in pools})
    lines += ["", "Machine: " + "; ".join(machines) + ".", ""]
    lines += [
        f"![{result.get('label', stem)}: recall@k](img/{stem}.svg)"
        for stem, result in pools
        if "curves" in result
    ]
    return "\n".join(lines).rstrip()


def rows_section(
    results: Results,
    benchmark: str,
    header: list[str],
    cells: Callable[[Result], list[str]],
    label: Callable[[Result], str],
    *,
    numeric_from: int = 1,
    text: int = 0,
    source: Callable[[Result], str] | None = None,
) -> str:
    """A table of every row of the `benchmark` results, each row's command, commit and date
    under it, and the machines. A row may name its own `machine`, `commit`, `date`, `command`."""
    found = results.of(benchmark)
    if not found:
        return f"(no {benchmark} results)"
    body = []
    sources = []
    machines: list[str] = []
    for _, result in found:
        for row in result.get("rows", [result]):
            body.append([label(row), *cells(row)])
            sources.append(f"- {(source or label)(row)}: {provenance(row, result)}")
            machine = str(row.get("machine", result.get("machine", "?")))
            if machine not in machines:
                machines.append(machine)
    return "\n".join(
        [
            table(header, body, numeric_from=numeric_from, text=text),
            "",
            *sources,
            "",
            "Machine: " + "; ".join(machines) + ".",
        ]
    )


def steps(row: Result) -> str:
    return ", ".join(f"{k} {number(v)}" for k, v in row.get("steps_p50_ms", {}).items())


def render_latency(results: Results) -> str:
    return rows_section(
        results,
        "latency",
        ["pool", "p50 ms", "p99 ms", "median per step, ms"],
        lambda r: [
            number(r.get("p50_range_ms", r.get("p50_ms"))),
            number(r.get("p99_range_ms", r.get("p99_ms"))),
            steps(r),
        ],
        lambda r: str(r["label"]),
        text=1,
    )


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{number(seconds, 2 if seconds < 10 else 1)} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def render_build(results: Results) -> str:
    build = rows_section(
        results,
        "build",
        ["build", "databases", "tables", "questions", "wall", "peak RSS GB"],
        lambda r: [
            number(r.get("databases")),
            number(r.get("tables")),
            number(r.get("questions")),
            duration(r["wall_s"]),
            number(r.get("peak_rss_gb"), 2),
        ],
        lambda r: str(r["label"]),
    )
    parts = [build]
    for _, scale in results.of("scale"):
        head = (
            f"**{scale['label']}** ({number(scale.get('databases'))} databases, "
            f"{number(scale.get('tables'))} tables, {number(scale.get('questions'))} synthetic "
            f"questions; {scale.get('pool', '')}):"
        )
        rows = [[str(r["label"]), str(r["value"])] for r in scale["rows"]]
        sources = [f"- {r['label']}: {provenance(r, scale)}" for r in scale["rows"]]
        parts += ["", head, "", table(["measure", "figure"], rows), "", *sources]
    return "\n".join(parts)


def render_examples(results: Results) -> str:
    found = results.of("examples")
    intro = [f"Questions: {r['questions']}." for _, r in found if "questions" in r]
    columns = ("db_R@1", "tab_R@5", "all_tabs@5", "bm25_table db_R@1", "dense_table db_R@1")
    return "\n".join(
        [
            *intro,
            "",
            rows_section(
                results,
                "examples",
                ["users' examples in the index", "examples", *columns],
                lambda r: [number(r["examples"]), *(number(r[c]) for c in columns)],
                lambda r: str(r["label"]),
            ),
        ]
    ).strip()


def render_generation(results: Results) -> str:
    found = results.of("generation")
    intro = [f"Questions: {r['questions']}." for _, r in found if "questions" in r]
    return "\n".join(
        [
            *intro,
            "",
            rows_section(
                results,
                "generation",
                ["model", "strategy", "setting", "EX", "easy", "medium", "hard", "extra"],
                lambda r: [
                    str(r["strategy"]),
                    str(r["setting"]),
                    f"**{number(r['EX'])}**",
                    *(number(r[level]) for level in ("easy", "medium", "hard", "extra")),
                ],
                lambda r: str(r["model"]),
                numeric_from=3,
                source=lambda r: f"{r['model']} {r['strategy']}, {r['setting']}",
            ),
        ]
    ).strip()


def render_http(results: Results) -> str:
    return rows_section(
        results,
        "http",
        ["load", "req/s", "p50 ms", "p99 ms", "errors", "server RSS MB"],
        lambda r: [
            number(r.get("req_s")),
            number(r.get("p50_ms")),
            number(r.get("p99_ms")),
            number(r.get("errors")),
            number(r.get("server_rss_mb")),
        ],
        lambda r: str(r["label"]),
    )


def render_startup(results: Results) -> str:
    found = results.of("startup")
    if not found:
        return "(no startup results)"
    parts = []
    for _, result in found:
        new = {r["command"]: r for r in result["rows"] if not r["checkout"].startswith("old")}
        old = {r["command"]: r for r in result["rows"] if r["checkout"].startswith("old")}
        old_label = next(
            (r["checkout"] for r in result["rows"] if r["checkout"].startswith("old")), "old"
        )
        rows = [
            [
                f"`{command}`",
                number(row["wall_s"], 2),
                number(row["cpu_s"], 2),
                number(old[command]["wall_s"], 2) if command in old else "",
            ]
            for command, row in new.items()
        ]
        header = ["command", "wall s", "CPU s", f"{old_label}, wall s"]
        parts += [
            table(header, rows),
            "",
            f"Median of {result['runs']} interleaved runs, whole process. {provenance(result)}.",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def pair(value: Any, digits: int = 1) -> list[str]:
    return [number(v, digits) for v in value] if isinstance(value, list) else [number(value)]


def render_mcp(results: Results) -> str:
    found = results.of("mcp")
    if not found:
        return "(no mcp results)"
    parts = []
    for _, result in found:
        sizes = list(result["commands"])
        header = ["tokens per answer"]
        for size in sizes:
            header += [f"N = {number(int(size))} median", "p90"]
        rows = [
            [f"`{r['answer']}`" if " " not in r["answer"] else r["answer"]]
            + [c for size in sizes for c in pair(r[size], 0)]
            for r in result["tokens"]
        ]
        latency_header = ["tool latency in process"]
        for size in sizes:
            latency_header += [f"N = {number(int(size))} p50 ms", "p99 ms"]
        latency_rows = [
            [r["tool"]] + [c for size in sizes for c in pair(r[size])] for r in result["latency_ms"]
        ]
        startup_rows = [
            [what] + [number(by_size.get(size), 2) + " s" for size in sizes]
            for what, by_size in result["startup_s"].items()
        ]
        parts += [
            f"Questions: {result['questions']}.",
            "",
            table(header, rows),
            "",
            table(latency_header, latency_rows),
            "",
            table(["start-up"] + [f"N = {number(int(s))}" for s in sizes], startup_rows),
            "",
            *(
                f"- N = {number(int(size))}: {result['commit']}, {result['date']}: `{command}`"
                for size, command in result["commands"].items()
            ),
            "",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def render_mcp_startup(results: Results) -> str:
    found = results.of("mcp-startup")
    if not found:
        return "(no mcp-startup results)"
    parts = []
    for _, result in found:
        estates = result["estates"]
        rows = []
        for label, entry in estates.items():
            for name in ("baseline", "this"):
                if name in entry:
                    side = entry[name]
                    rows.append(
                        [
                            number(int(label)) if label.isdigit() else label,
                            side["commit"],
                            number(side["list_databases_median_s"], 2),
                            number(side["find_tables_median_s"], 2),
                            " ".join(number(v, 1) for v in side["find_tables_s"]),
                            number(side["describe_tables_median_s"], 2)
                            if "describe_tables_median_s" in side
                            else "",
                            number(side["serve_ready_median_s"], 2)
                            if "serve_ready_median_s" in side
                            else "",
                            number(side["serve_retrieve_median_s"], 2)
                            if "serve_retrieve_median_s" in side
                            else "",
                        ]
                    )
        header = [
            "databases",
            "commit",
            "list_databases s",
            "find_tables s",
            "find_tables runs",
            "then describe_tables s",
            "serve /readyz s",
            "serve first retrieve s",
        ]
        parts += [
            table(header, rows),
            "",
            *(
                f"- {label}: {entry['date']}, {entry['runs']} interleaved runs: "
                f"`{entry['command']}`"
                for label, entry in estates.items()
            ),
            "",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def render_catalog_show(results: Results) -> str:
    found = results.of("catalog-show")
    if not found:
        return "(no catalog-show results)"
    parts = []
    for _, result in found:
        rows = [
            [
                row["checkout"],
                number(row["wall_s"], 1),
                number(row["cpu_s"], 1),
                number(row["peak_rss_mb"], 0),
                row["loaded"],
            ]
            for row in result["rows"]
        ]
        parts += [
            table(["checkout", "wall s", "CPU s", "peak RSS MB", "loaded"], rows),
            "",
            f"Median of {result['runs']} interleaved runs of `{result['timed']}`. "
            f"{provenance(result)}.",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def render_check(results: Results) -> str:
    found = results.of("check")
    if not found:
        return "(no check results)"
    parts = []
    for _, result in found:
        gold, mutations, ms = result["gold"], result["mutations"], result["time_ms"]
        rows = [
            [
                f"gold SQL, {dialect}",
                number(side["queries"], 0),
                number(side["accepted"], 0),
                number(100.0 * side["accepted"] / side["queries"]) + " %",
            ]
            for dialect, side in gold["by_dialect"].items()
        ]
        rows.append(
            [
                "gold SQL, all",
                number(gold["queries"], 0),
                number(gold["accepted"], 0),
                number(gold["accepted_pct"]) + " %",
            ]
        )
        mutation_rows = [
            [kind.replace("_", " "), number(m["made"], 0), number(m["caught"], 0)]
            for kind, m in mutations["by_kind"].items()
        ]
        mutation_rows.append(
            [
                "all (seed " + str(mutations["seed"]) + ")",
                number(mutations["made"], 0),
                number(mutations["rejected_naming_the_wrong_name"], 0)
                + f" ({number(mutations['caught_pct'])} %)",
            ]
        )
        rejected = gold.get("rejected") or []
        parts += [
            table(["queries", "checked", "accepted", "share"], rows),
            "",
            "Rejected gold SQL: "
            + ("; ".join(f"{r['instance_id']}: {r['reason']}" for r in rejected) or "none")
            + ".",
            "",
            table(["mutation", "made", "rejected naming the wrong name"], mutation_rows),
            "",
            f"Time per check: p50 {number(ms['gold_p50'], 1)} ms, p99 {number(ms['gold_p99'], 1)}"
            f" ms on the gold SQL; p50 {number(ms['mutations_p50'], 1)} ms, p99 "
            f"{number(ms['mutations_p99'], 1)} ms on the mutations. {provenance(result)}.",
            f"Catalog: {number(result['catalog']['databases'], 0)} databases, "
            f"{number(result['catalog']['tables'], 0)} tables "
            f"(`{' '.join(result['catalog']['sources'])}`).",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def render_synthesis_warehouse(results: Results) -> str:
    found = results.of("synthesis-warehouse")
    if not found:
        return "(no synthesis-warehouse results)"
    parts = []
    for _, result in found:
        rows = []
        for dialect, side in result["kept"].items():
            kinds = ", ".join(f"{k} {v}" for k, v in side["unreadable_kinds"].items())
            rows.append(
                [
                    dialect,
                    number(side["pairs"], 0),
                    number(100 * side["parse_rate"]) + " %",
                    number(100 * side["check_rate"]) + " %",
                    number(100 * side["unsaid_rate"]) + " %",
                    number(100 * side["unreadable_rate"]) + " %",
                    kinds,
                ]
            )
        header = ["kept pairs", "n", "parse", "check", "unsaid", "unreadable", "why"]
        parts += [
            f"{result['label']}: {number(result['sampled'], 0)} of "
            f"{number(result['traversals'], 0)} traversals, seeded, synthesized without an "
            "index; the pairs a build keeps.",
            "",
            table(header, rows),
            "",
            f"{provenance(result)}.",
            f"Machine: {result['machine']}.",
        ]
    return "\n".join(parts)


def recall_of(results: Results, stem: str) -> Result | None:
    result = results.files.get(stem)
    return result if result is not None and result["benchmark"] == "recall" else None


def render_readme(results: Results) -> str:
    """The README's short table: at most 10 rows, then the link to the full report."""
    rows = []
    for stem in RECALL_ORDER[:5]:
        result = recall_of(results, stem)
        if result is None:
            continue
        ours = result["methods"]["schemarag"]
        best = max(
            (result["methods"][m] for m in METHODS[1:] if m in result["methods"]),
            key=lambda f: f["db_R@1"],
            default=None,
        )
        rows.append(
            [
                f"{result.get('label', stem)}: first database right, db_R@1 "
                f"({number(result['databases'])} databases)",
                f"**{number(ours['db_R@1'])} %**",
                f"{number(best['db_R@1'])} %" if best else "",
            ]
        )
    dev = recall_of(results, "recall-spider-dev")
    if dev is not None:
        ours = dev["methods"]["schemarag"]
        rows.append(
            [
                "Spider dev: retrieval latency in process, p50 / p99",
                f"{number(ours['latency_ms_p50'])} / {number(ours['latency_ms_p99'])} ms",
                "",
            ]
        )
    for _, scale in results.of("scale"):
        by_label = {r["label"]: r["value"] for r in scale["rows"]}
        recall = next((v for k, v in by_label.items() if "db_R@1" in k), None)
        build = next((v for k, v in by_label.items() if k.startswith("full build")), None)
        if recall and build:
            rows.append(
                [
                    f"{scale['label']}: Spider dev db_R@1 / all_tabs@10; full build",
                    f"{recall}; {build}",
                    "",
                ]
            )
    generation = [r for _, g in results.of("generation") for r in g["rows"]]
    if generation:
        best = max(generation, key=lambda r: r["EX"])
        rows.append(
            [
                f"Generation, 24 Spider dev questions: EX, Qwen2.5-Coder {best['model']} "
                f"{best['strategy']}, {best['setting']}",
                f"{number(best['EX'])} %",
                "",
            ]
        )
    http = [r for _, h in results.of("http") for r in h["rows"]]
    if http:
        first = http[0]
        rows.append(
            [
                f"HTTP /v1/retrieve, {first['label']}: p50",
                f"{number(first['p50_ms'])} ms",
                "",
            ]
        )
    for _, startup in results.of("startup"):
        by_command = {
            r["command"]: r for r in startup["rows"] if not r["checkout"].startswith("old")
        }
        if "retrieve" in by_command:
            rows.append(
                [
                    "Start-up: `retrieve` on the demo store, whole process",
                    f"{number(by_command['retrieve']['wall_s'], 2)} s",
                    "",
                ]
            )
    rows = rows[:10]
    return "\n".join(
        [
            table(["measure", "schemarag", "best baseline"], rows),
            "",
            "Commands, machines, dates, every baseline and the decision log: "
            "[docs/BENCHMARKS.md](docs/BENCHMARKS.md).",
        ]
    )


SECTIONS: dict[str, Callable[[Results], str]] = {
    "recall": render_recall,
    "examples": render_examples,
    "latency": render_latency,
    "build": render_build,
    "generation": render_generation,
    "http": render_http,
    "startup": render_startup,
    "mcp": render_mcp,
    "mcp-startup": render_mcp_startup,
    "catalog-show": render_catalog_show,
    "check": render_check,
    "synthesis-warehouse": render_synthesis_warehouse,
}


def replace_between(text: str, name: str, body: str, where: Path) -> str:
    """`text` with the part between `<!-- report:NAME -->` and `<!-- /report:NAME -->`
    replaced by `body`."""
    start, end = f"<!-- report:{name} -->", f"<!-- /report:{name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise ReportError(f"{where} has no {start} ... {end} markers: add them where it goes")
    notice = "<!-- generated by benchmarks/render_report.py from benchmarks/results: no edits -->"
    return pattern.sub(lambda _: f"{start}\n{notice}\n\n{body}\n\n{end}", text, count=1)


def svg_plot(result: Result, title: str) -> str:
    """recall@k curves of a recall result (db_R@k solid, tab_R@k dashed), as a small SVG."""
    width, height, left, right, top, bottom = 480, 300, 48, 150, 28, 36
    curves = result["curves"]
    ks = [k for method in curves.values() for k in method["k"]]
    k_max = max(ks) if ks else 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(k: float) -> float:
        return left + (k - 1) / max(k_max - 1, 1) * plot_w

    def y(value: float) -> float:
        return top + (100 - value) / 100 * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="16" font-size="12">{escape(title)}</text>',
    ]
    for value in range(0, 101, 20):
        out.append(
            f'<line x1="{left}" y1="{y(value):.1f}" x2="{left + plot_w}" y2="{y(value):.1f}" '
            'stroke="#ddd"/>'
        )
        out.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value}</text>')
    for k in sorted({int(k) for k in ks}):
        if k == 1 or k % 5 == 0:
            out.append(
                f'<text x="{x(k):.1f}" y="{top + plot_h + 14}" text-anchor="middle">{k}</text>'
            )
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">k</text>')
    legend_y = top + 6
    for method, curve in curves.items():
        color = COLORS.get(method, "#555")
        for key, dash in (("db_R", ""), ("tab_R", ' stroke-dasharray="5,3"')):
            if key not in curve:
                continue
            points = " ".join(
                f"{x(k):.1f},{y(v):.1f}" for k, v in zip(curve["k"], curve[key], strict=True)
            )
            out.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.6"{dash} '
                f'points="{points}"/>'
            )
            lx = left + plot_w + 10
            out.append(
                f'<line x1="{lx}" y1="{legend_y}" x2="{lx + 18}" y2="{legend_y}" '
                f'stroke="{color}" stroke-width="1.6"{dash}/>'
            )
            out.append(f'<text x="{lx + 22}" y="{legend_y + 4}">{escape(method)} {key}@k</text>')
            legend_y += 16
    out.append("</svg>")
    return "\n".join(out) + "\n"


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(results: Results, benchmarks_md: Path, readme: Path, img: Path) -> dict[Path, str]:
    """Every file the report writes, with its new text."""
    for path in (benchmarks_md, readme):
        if not path.is_file():
            raise ReportError(f"no document {path}: pass --benchmarks FILE / --readme FILE")
    doc = benchmarks_md.read_text()
    for name, section in SECTIONS.items():
        doc = replace_between(doc, name, section(results), benchmarks_md)
    readme_text = replace_between(readme.read_text(), "readme", render_readme(results), readme)
    out = {benchmarks_md: doc, readme: readme_text}
    for stem, result in results.of("recall"):
        if "curves" in result:
            label = result.get("label", stem)
            title = f"{label}: recall@k ({number(result['questions'])} questions)"
            out[img / f"{stem}.svg"] = svg_plot(result, title)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=REPO / "benchmarks/results")
    parser.add_argument("--benchmarks", type=Path, default=REPO / "docs/BENCHMARKS.md")
    parser.add_argument("--readme", type=Path, default=REPO / "README.md")
    parser.add_argument("--img", type=Path, default=REPO / "docs/img")
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a document differs"
    )
    args = parser.parse_args(argv)
    try:
        files = render(Results.read(args.results), args.benchmarks, args.readme, args.img)
    except (ReportError, KeyError, TypeError) as error:
        message = error if isinstance(error, ReportError) else f"a result file lacks {error}"
        print(f"render_report: error: {message}", file=sys.stderr)
        return 2
    stale = [p for p, text in files.items() if not p.is_file() or p.read_text() != text]
    if args.check:
        for path in stale:
            print(
                f"render_report: {path} differs from what benchmarks/results renders; "
                "run benchmarks/render_report.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files[path])
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
