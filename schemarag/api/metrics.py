"""Counters, gauges and histograms in the Prometheus text exposition format (version 0.0.4).

Hand-written and thread-safe; enough for `/metrics`, with no client library:

    registry = Registry()
    requests = registry.counter("schemarag_http_requests_total", "HTTP requests", ("route",))
    requests.inc("/v1/retrieve")
    registry.render()
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Callable, Sequence

__all__ = ["CONTENT_TYPE", "LATENCY_BUCKETS", "Counter", "Gauge", "Histogram", "Registry"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

#: Seconds; the retrieval path is expected in the tens of milliseconds.
LATENCY_BUCKETS = (0.005, 0.01, 0.015, 0.025, 0.04, 0.06, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=True)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


class _Metric:
    kind = "untyped"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help
        self.labelnames = tuple(labels)
        self._lock = threading.Lock()

    def _key(self, values: Sequence[str]) -> tuple[str, ...]:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}, got {tuple(values)}")
        return tuple(str(v) for v in values)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> list[str]:
        raise NotImplementedError


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        super().__init__(name, help, labels)
        self._values: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, *labels: str) -> float:
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def samples(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        return [f"{self.name}{_labels(self.labelnames, k)} {_number(v)}" for k, v in items]


class Gauge(_Metric):
    """A value set directly, or read from `function` at each scrape."""

    kind = "gauge"

    def __init__(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        function: Callable[[], dict[tuple[str, ...], float]] | None = None,
    ) -> None:
        super().__init__(name, help, labels)
        self._values: dict[tuple[str, ...], float] = {}
        self._function = function

    def set(self, value: float, *labels: str) -> None:
        with self._lock:
            self._values[self._key(labels)] = value

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def dec(self, *labels: str, amount: float = 1.0) -> None:
        self.inc(*labels, amount=-amount)

    def samples(self) -> list[str]:
        if self._function is not None:
            items = sorted(self._function().items())
        else:
            with self._lock:
                items = sorted(self._values.items())
        return [f"{self.name}{_labels(self.labelnames, k)} {_number(v)}" for k, v in items]


class Histogram(_Metric):
    kind = "histogram"

    def __init__(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        buckets: Sequence[float] = LATENCY_BUCKETS,
    ) -> None:
        super().__init__(name, help, labels)
        if list(buckets) != sorted(set(buckets)) or not buckets:
            raise ValueError("buckets must be increasing and non-empty")
        self.buckets = tuple(float(b) for b in buckets)
        self._counts: dict[tuple[str, ...], list[int]] = {}
        self._sums: dict[tuple[str, ...], float] = {}

    def observe(self, value: float, *labels: str) -> None:
        key = self._key(labels)
        slot = bisect.bisect_left(self.buckets, value)
        with self._lock:
            counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
            counts[slot] += 1
            self._sums[key] = self._sums.get(key, 0.0) + value

    def count(self, *labels: str) -> int:
        with self._lock:
            return sum(self._counts.get(self._key(labels), ()))

    def samples(self) -> list[str]:
        with self._lock:
            items = sorted((k, list(c), self._sums[k]) for k, c in self._counts.items())
        lines = []
        for key, counts, total in items:
            running = 0
            for bound, n in zip((*self.buckets, math.inf), counts, strict=True):
                running += n
                le = f'le="{_number(bound)}"'
                lines.append(f"{self.name}_bucket{_labels(self.labelnames, key, le)} {running}")
            lines.append(f"{self.name}_sum{_labels(self.labelnames, key)} {_number(total)}")
            lines.append(f"{self.name}_count{_labels(self.labelnames, key)} {running}")
        return lines


class Registry:
    """The metrics of one app, rendered in registration order."""

    def __init__(self) -> None:
        self._metrics: list[_Metric] = []
        self._names: set[str] = set()

    def _add(self, metric: _Metric) -> None:
        if metric.name in self._names:
            raise ValueError(f"metric {metric.name} is registered twice")
        self._names.add(metric.name)
        self._metrics.append(metric)

    def counter(self, name: str, help: str, labels: Sequence[str] = ()) -> Counter:
        metric = Counter(name, help, labels)
        self._add(metric)
        return metric

    def gauge(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        function: Callable[[], dict[tuple[str, ...], float]] | None = None,
    ) -> Gauge:
        metric = Gauge(name, help, labels, function)
        self._add(metric)
        return metric

    def histogram(
        self,
        name: str,
        help: str,
        labels: Sequence[str] = (),
        buckets: Sequence[float] = LATENCY_BUCKETS,
    ) -> Histogram:
        metric = Histogram(name, help, labels, buckets)
        self._add(metric)
        return metric

    def render(self) -> str:
        lines: list[str] = []
        for metric in self._metrics:
            lines += metric.header()
            lines += metric.samples()
        return "\n".join(lines) + "\n"
