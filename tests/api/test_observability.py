"""Request logs (one JSON line per request: route, status, latency; the question only when
enabled) and Prometheus metrics (request counts, latency histograms, the served build)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from schemarag.api import ApiOptions
from schemarag.api.metrics import Registry
from tests.api.conftest import Serve

QUESTION = "How many singers are from France?"
SAMPLE = re.compile(r'^[a-z_]+(\{([a-z_]+="[^"]*",?)*\})? [-+0-9.eInf]+$')


def access_records(caplog: pytest.LogCaptureFixture) -> list[dict[str, object]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "schemarag.api.access"]


def test_each_request_logs_route_status_latency_and_no_question(
    serve: Serve, built_store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="schemarag.api.access")
    with serve(built_store) as client:
        caplog.clear()
        client.post("/v1/retrieve", json={"question": QUESTION}, headers={"X-Request-ID": "abc-1"})
        client.get("/missing")
    records = access_records(caplog)
    assert [(r["route"], r["status"]) for r in records] == [
        ("/v1/retrieve", 200),
        ("unmatched", 404),
    ]
    first = records[0]
    assert first["method"] == "POST" and first["request_id"] == "abc-1"
    assert isinstance(first["latency_ms"], float) and first["latency_ms"] > 0
    assert first["build_id"]
    assert "question" not in first
    assert all(QUESTION not in r.getMessage() for r in caplog.records)


def test_question_text_is_logged_only_when_enabled(
    serve: Serve, built_store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="schemarag.api.access")
    options = ApiOptions(log_questions=True, reload_interval_s=0.05)
    with serve(built_store, options=options) as client:
        caplog.clear()
        client.post("/v1/retrieve", json={"question": QUESTION})
    assert access_records(caplog)[0]["question"] == QUESTION


def test_request_ids_are_returned_and_bad_ones_replaced(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        assert (
            client.get("/healthz", headers={"X-Request-ID": "req.42"}).headers["x-request-id"]
            == "req.42"
        )
        replaced = client.get("/healthz", headers={"X-Request-ID": "bad id\t!"})
        assert re.fullmatch(r"[0-9a-f]{32}", replaced.headers["x-request-id"])


def test_metrics_count_requests_and_time_them(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        for _ in range(3):
            client.post("/v1/retrieve", json={"question": QUESTION})
        client.post("/v1/retrieve", json={"question": ""})
        client.get("/nowhere")
        response = client.get("/metrics")
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = response.text
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert all(SAMPLE.match(line) for line in lines), [x for x in lines if not SAMPLE.match(x)]
    assert (
        'schemarag_http_requests_total{method="POST",route="/v1/retrieve",status="200"} 3' in text
    )
    assert (
        'schemarag_http_requests_total{method="POST",route="/v1/retrieve",status="422"} 1' in text
    )
    assert 'schemarag_http_requests_total{method="GET",route="unmatched",status="404"} 1' in text
    count = 'schemarag_http_request_duration_seconds_count{method="POST",route="/v1/retrieve"} 4'
    assert count in text
    assert '_bucket{method="POST",route="/v1/retrieve",le="+Inf"} 4' in text
    assert "schemarag_index_ready 1" in text
    assert re.search(r'schemarag_index_build_info\{build_id="[^"]+"\} 1', text)
    assert 'schemarag_index_reloads_total{outcome="ok"} 1' in text
    assert "# TYPE schemarag_http_request_duration_seconds histogram" in text


def test_histogram_buckets_are_cumulative() -> None:
    registry = Registry()
    histogram = registry.histogram("t_seconds", "test", ("route",), buckets=(0.1, 1.0))
    for value in (0.05, 0.1, 0.5, 2.0):
        histogram.observe(value, "/x")
    text = registry.render()
    assert 't_seconds_bucket{route="/x",le="0.1"} 2' in text
    assert 't_seconds_bucket{route="/x",le="1"} 3' in text
    assert 't_seconds_bucket{route="/x",le="+Inf"} 4' in text
    assert 't_seconds_sum{route="/x"} 2.65' in text
    assert 't_seconds_count{route="/x"} 4' in text
    with pytest.raises(ValueError, match="registered twice"):
        registry.counter("t_seconds", "again")
