"""Result files: a benchmark's figures with the command, commit, machine and date that made them.

`benchmarks/render_report.py` renders docs/BENCHMARKS.md's tables and the README's short table
from these files (benchmarks/results/*.json). A result holds summaries only: per-question data
stays in the `--json` report.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# the fields of a recall report that go into its result file, as they are
RECALL_FIELDS = (
    "dataset",
    "questions",
    "databases",
    "methods",
    "breakdowns",
    "curves",
    "skipped",
    "embedder",
    "precision",
    "user_examples",
    "sample",
    "pool",
)
# lists in a recall report that a result file only counts
RECALL_COUNTED = ("twin_groups", "containment_groups", "masked_records")


def commit(repo: Path | None = None) -> str:
    """The short commit of `repo` (the current directory by default), or "unknown"."""
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=repo,
        check=False,
    )
    return done.stdout.strip() or "unknown"


def machine() -> str:
    """Cores, architecture and Python of this machine, in one line."""
    return f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"


def provenance(benchmark: str, label: str, arguments: list[str]) -> dict[str, Any]:
    """The head of a result file: what ran (`schemarag` with `arguments`), where and when."""
    return {
        "benchmark": benchmark,
        "label": label,
        "command": shlex.join(["schemarag", *arguments]),
        "commit": commit(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
    }


def recall_result(report: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """The result file of a `bench recall` report: `head` (see `provenance`), then the
    report's summary figures and recall@k curves; groups and masked records only counted."""
    result = dict(head)
    result.update({key: report[key] for key in RECALL_FIELDS if key in report})
    for key in RECALL_COUNTED:
        if key in report:
            result[key] = len(report[key])
    return result


def generation_result(report: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    """The result file of a `bench ex` report: one row per setting (model, strategy, setting,
    EX overall and by hardness, tokens per question), each with `head`'s command, commit and
    date; per-question data left out."""
    sample = report.get("sample")
    questions = f"{report['questions']} {report.get('dataset', '')} questions".replace("  ", " ")
    if sample:
        questions += f" stratified by hardness (--sample {sample['size']} --seed {sample['seed']})"
    rows = []
    for setting, row in report["settings"].items():
        levels = row["by_hardness"]
        rows.append(
            {
                "model": " + ".join(report["llms"]),
                "strategy": report["strategy"],
                "setting": setting.replace("-", " "),
                "EX": row["execution_accuracy"],
                **{
                    level: levels.get(level, {}).get("execution_accuracy", 0.0)
                    for level in ("easy", "medium", "hard", "extra")
                },
                "tokens_per_q": row["tokens_per_question"],
                "command": head["command"],
                "commit": head["commit"],
                "date": head["date"],
            }
        )
    return {
        "benchmark": "generation",
        "machine": head["machine"],
        "questions": questions,
        **({"question_ids": report["question_ids"]} if sample else {}),
        "rows": rows,
    }
