"""Load on the HTTP API: concurrent clients on loopback against `schemarag serve`.

The server runs in its own process (`python -m schemarag serve`) over a *copy* of the store
(so the original is never written); this process is the load generator: `--clients` threads,
each with one keep-alive connection, posting Spider dev questions back to back to
/v1/retrieve for `--duration` seconds after a `--warmup`. Every answer that is not a 200 with a
JSON body counts as an error. Reports throughput and p50/p90/p99/max latency (client side), and
the CPU time per request of the server (all its worker processes, `--workers N`) and of this
load generator, and the server's resident memory at the end.
With `--rate R` the clients instead send R requests/s in all on a fixed schedule, and latency
counts from the scheduled time: the latency below saturation.

With `--rebuild SOURCE`, a full `schemarag index build SOURCE` runs in another process into the
served store while the load runs (starting `--rebuild-at` seconds in); the server must pick the
new build up with no failed request. Latencies are then also reported per phase: before the
build, while it runs, and after the server swapped to the new build.

    .venv/bin/python benchmarks/bench_api_load.py --store /tmp/kbspider --workers 2
    .venv/bin/python benchmarks/bench_api_load.py --store /tmp/kbspider --rate 10
    .venv/bin/python benchmarks/bench_api_load.py --store /tmp/kbspider \\
        --rebuild spider:../shared/data/spider --duration 120
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEV = REPO.parent / "shared/data/spider/dev.json"
FALLBACK = [
    "How many singers are from France?",
    "What is the average weight of pets owned by students?",
    "List the car makers from Japan.",
    "Which shops hired employees full time?",
]


@dataclass
class Sample:
    started: float  # seconds since the measured window began
    latency_ms: float
    status: int
    build: str


@dataclass
class Load:
    samples: list[Sample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def wait_ready(port: int, server: subprocess.Popen[bytes], timeout: float = 300) -> float:
    """Seconds until /readyz answered 200 twenty times in a row (new connections reach any
    of the server's worker processes, and each loads the index on its own)."""
    started = time.perf_counter()
    streak = 0
    while time.perf_counter() - started < timeout:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with status {server.returncode}")
        try:
            streak = streak + 1 if get(port, "/readyz")[0] == 200 else 0
        except OSError:
            streak = 0
        if streak >= 20:
            return time.perf_counter() - started
        time.sleep(0.2 if streak == 0 else 0.01)
    raise SystemExit("the server did not become ready")


def client(
    port: int,
    questions: list[str],
    offset: int,
    t0: float,
    stop: threading.Event,
    load: Load,
    interval: float | None,
    phase: float = 0.0,
) -> None:
    """Back to back (`interval` None), or one request every `interval` seconds on a fixed
    schedule starting `phase` (a fraction of the interval) in, latency counted from the
    scheduled time (so a slow server is not hidden by the client waiting for it: no
    coordinated omission)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    i = offset
    scheduled = time.perf_counter() + (interval or 0.0) * phase
    while not stop.is_set():
        body = json.dumps({"question": questions[i % len(questions)]})
        i += 1
        if interval is not None:
            pause = scheduled - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            begin = scheduled
            scheduled += interval
        else:
            begin = time.perf_counter()
        try:
            conn.request("POST", "/v1/retrieve", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            payload = response.read()
            latency = (time.perf_counter() - begin) * 1000
            status = response.status
            build = response.getheader("X-Schemarag-Build") or ""
            if status != 200 or not json.loads(payload).get("databases"):
                with load.lock:
                    load.failures.append(f"{status}: {payload[:200]!r}")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            latency, status, build = (time.perf_counter() - begin) * 1000, 0, ""
            with load.lock:
                load.failures.append(f"{type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with load.lock:
            load.samples.append(Sample(begin - t0, latency, status, build))
    conn.close()


def _stats(pid: int) -> list[list[str]]:
    """/proc stat fields (after the command name) of a process and of its running child
    processes (uvicorn's workers); empty where there is no Linux /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if stat.parent.name == str(pid) or int(fields[1]) == pid:  # itself, or a child
            found.append(fields)
    return found


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process and its child processes, from Linux /proc; None
    elsewhere. CPU time per request is steadier than latency on a shared machine."""
    stats = _stats(pid)
    ticks = sum(int(fields[11]) + int(fields[12]) for fields in stats)
    return ticks / os.sysconf("SC_CLK_TCK") if stats else None


def resident_mb(pid: int) -> int | None:
    """Resident memory of a process and its child processes, MiB (Linux /proc; else None)."""
    stats = _stats(pid)
    pages = sum(int(fields[21]) for fields in stats)
    return pages * os.sysconf("SC_PAGE_SIZE") // 2**20 if stats else None


def summary(samples: list[Sample], seconds: float) -> dict[str, Any]:
    if not samples:
        return {"requests": 0}
    latencies = sorted(s.latency_ms for s in samples)
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "requests": len(samples),
        "errors": sum(1 for s in samples if s.status != 200),
        "rps": round(len(samples) / seconds, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p90_ms": round(cuts[89], 1),
        "p99_ms": round(cuts[98], 1),
        "max_ms": round(latencies[-1], 1),
    }


def load_questions(limit: int, every: bool = False) -> list[str]:
    """The first `limit` Spider dev questions; with `every`, every distinct question of the
    Spider data (train, dev, their Spider-Syn rewrites, Spider-DK: about 16,000), shuffled with
    a fixed seed, so that a run meets mostly questions (and words) it has not seen before."""
    if not DEV.exists():
        return FALLBACK
    if not every:
        return [q["question"] for q in json.loads(DEV.read_text())][:limit]
    root = DEV.parent
    found = [q["question"] for q in json.loads(DEV.read_text())]
    found += [q["question"] for q in json.loads((root / "train_spider.json").read_text())]
    for name in ("dev.json", "train_spider.json"):
        rows = json.loads((root / "spider_syn" / name).read_text())
        found += [q["SpiderSynQuestion"] for q in rows]
    found += [q["question"] for q in json.loads((root / "spider_dk/Spider-DK.json").read_text())]
    distinct = list(dict.fromkeys(q.strip() for q in found if q.strip()))
    random.Random(0).shuffle(distinct)
    return distinct


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, type=Path, help="an embedded store (copied)")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--duration", type=float, default=60.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=5.0, help="unmeasured seconds first")
    parser.add_argument("--questions", type=int, default=1034, help="distinct questions cycled")
    parser.add_argument(
        "--every-question",
        action="store_true",
        help="cycle every distinct Spider question (~16,000) instead of the dev questions",
    )
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="offered load in requests/s over all clients (default: back to back)",
    )
    parser.add_argument("--rebuild", metavar="SOURCE", help="build SOURCE in during the load")
    parser.add_argument("--rebuild-at", type=float, default=10.0, help="seconds into the window")
    parser.add_argument(
        "--rebuild-flags", default="", help="more `index build` flags, e.g. '--chains 1'"
    )
    parser.add_argument("--workers", type=int, default=1, help="`schemarag serve --workers`")
    parser.add_argument("--json", type=Path, metavar="OUT")
    parser.add_argument(
        "--result",
        type=Path,
        metavar="OUT",
        help="write a result file for benchmarks/render_report.py (one row: the load, req/s, "
        "p50, p99, errors, server RSS, with the command, commit, machine and date)",
    )
    parser.add_argument("--label", default=None, help="the row's name in the report")
    args = parser.parse_args()

    if args.rebuild:  # the builder runs in a temporary folder: make the source path absolute
        kind, _, path = args.rebuild.partition(":")
        args.rebuild = f"{kind}:{Path(path).resolve()}"
    work = Path(tempfile.mkdtemp(prefix="bench-api-"))
    store = work / "store"
    shutil.copytree(args.store, store)
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("SCHEMARAG_API_KEY", None)
    server_log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "schemarag", "serve", "--store", str(store)),
            *("--port", str(port), "--workers", str(args.workers)),
        ],
        cwd=work,
        env=env,
        stdout=server_log,
        stderr=server_log,
    )
    builder: subprocess.Popen[bytes] | None = None
    try:
        ready_s = wait_ready(port, server)
        first_build = json.loads(get(port, "/v1/index")[1])["build_id"]
        questions = load_questions(args.questions, args.every_question)
        load = Load()
        stop = threading.Event()
        t0 = time.perf_counter() + args.warmup
        interval = args.clients / args.rate if args.rate else None
        threads = [
            threading.Thread(
                target=client,
                args=(
                    port,
                    questions,
                    n * len(questions) // args.clients,
                    t0,
                    stop,
                    load,
                    interval,
                    n / args.clients,  # the clients' schedules evenly out of phase
                ),
            )
            for n in range(args.clients)
        ]
        for thread in threads:
            thread.start()
        rebuild: dict[str, Any] = {}
        deadline = t0 + args.duration
        while time.perf_counter() < t0:
            time.sleep(0.01)
        cpu_start = cpu_seconds(server.pid)
        client_cpu_start = time.process_time()
        while time.perf_counter() < deadline:
            now = time.perf_counter() - t0
            if args.rebuild and builder is None and now >= args.rebuild_at:
                rebuild.update(started_s=round(now, 1), flags=args.rebuild_flags)
                builder = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "schemarag",
                        "index",
                        "build",
                        args.rebuild,
                        "--store",
                        str(store),
                        "--full",
                        *shlex.split(args.rebuild_flags),
                    ],
                    cwd=work,  # its provider cache goes there too: a cold, honest build
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=(work / "build.log").open("wb"),
                )
            if builder is not None and builder.poll() is not None and "finished_s" not in rebuild:
                rebuild["finished_s"] = round(now, 1)
                rebuild["returncode"] = builder.returncode
            time.sleep(0.05)
        cpu_end = cpu_seconds(server.pid)
        server_mb = resident_mb(server.pid)
        client_cpu = time.process_time() - client_cpu_start
        stop.set()
        for thread in threads:
            thread.join()
        if builder is not None and builder.poll() is None:
            print("the rebuild is still running at the end of the window; waiting", flush=True)
            builder.wait()
            rebuild.setdefault("finished_s", round(time.perf_counter() - t0, 1))
            rebuild["returncode"] = builder.returncode
        index = json.loads(get(port, "/v1/index")[1])
        metrics = get(port, "/metrics")[1].decode()
        load_seconds = [
            float(line.split()[-1])
            for line in metrics.splitlines()
            if line.startswith("schemarag_index_load_seconds ")
        ]
        measured = [s for s in load.samples if 0 <= s.started < args.duration]
        result: dict[str, Any] = {
            "date": date.today().isoformat(),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, "
            f"Python {platform.python_version()}",
            "load_average_at_end": os.getloadavg(),
            "store": str(args.store),
            "index": {k: index.get(k) for k in ("databases", "tables", "questions", "embedder")},
            "clients": args.clients,
            "workers": args.workers,
            "offered_rps": args.rate,
            "duration_s": args.duration,
            "server_ready_s": round(ready_s, 1),
            "distinct_questions": len(questions),
            "all": summary(measured, args.duration),
            "server_cpu_ms_per_request": (
                round(1000 * (cpu_end - cpu_start) / len(measured), 1)
                if cpu_start is not None and cpu_end is not None and measured
                else None
            ),
            "client_cpu_ms_per_request": (
                round(1000 * client_cpu / len(measured), 2) if measured else None
            ),
            "server_resident_mb_at_end": server_mb,
            "failures": load.failures[:10],
            "failure_count": len(load.failures),
        }
        if args.rebuild:
            second = index["build_id"]
            swapped = min(
                (s.started for s in measured if s.build == second and second != first_build),
                default=None,
            )
            rebuild.update(
                first_build=first_build,
                second_build=second,
                served_new_build_from_s=round(swapped, 1) if swapped is not None else None,
                server_load_seconds=load_seconds[0] if load_seconds else None,
                builds_seen=sorted({s.build for s in measured}),
            )
            result["rebuild"] = rebuild
            if rebuild.get("returncode"):
                log = (work / "build.log").read_text(errors="replace").strip().splitlines()
                rebuild["build_log_tail"] = log[-5:]
            start, end = rebuild["started_s"], rebuild.get("finished_s", args.duration)
            phases = {
                "before_build": [s for s in measured if s.started < start],
                "during_build": [s for s in measured if start <= s.started < end],
                "after_swap": [
                    s for s in measured if swapped is not None and s.started >= max(swapped, end)
                ],
            }
            result["phases"] = {
                name: summary(items, max(1e-9, _span(items))) for name, items in phases.items()
            }
        print(json.dumps(result, indent=2))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        if args.result:
            args.result.write_text(json.dumps(report_row(args, result), indent=1) + "\n")
        failed = result["failure_count"] or (args.rebuild and rebuild.get("returncode") != 0)
        return 1 if failed else 0
    finally:
        if builder is not None and builder.poll() is None:
            builder.terminate()
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        server_log.close()
        shutil.rmtree(work, ignore_errors=True)


def report_row(args: argparse.Namespace, result: dict[str, Any]) -> dict[str, Any]:
    """`result` as a result file of the report's HTTP table."""
    measured = result["all"]
    label = args.label or (
        f"{args.clients} clients"
        + (f", {args.rate:g} req/s offered" if args.rate else " back to back")
        + f", {args.workers} worker{'s' if args.workers > 1 else ''}"
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return {
        "benchmark": "http",
        "machine": result["machine"],
        "index": result["index"],
        "rows": [
            {
                "label": label,
                "req_s": measured.get("rps"),
                "p50_ms": measured.get("p50_ms"),
                "p99_ms": measured.get("p99_ms"),
                "errors": measured.get("errors", 0),
                "server_rss_mb": result.get("server_resident_mb_at_end"),
                "command": shlex.join(["benchmarks/bench_api_load.py", *sys.argv[1:]]),
                "commit": commit or "unknown",
                "date": result["date"],
            }
        ],
    }


def _span(samples: list[Sample]) -> float:
    if not samples:
        return 0.0
    return max(s.started for s in samples) - min(s.started for s in samples)


if __name__ == "__main__":
    sys.exit(main())
