"""What a run produces: per figure, the series of samples of each contestant,
the targets checked, and notes (what was not available, and why)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bench.stats import Summary, ratio

OURS = "agentls"
# ``--baseline REV``: agentls at that revision, run beside this checkout.
BEFORE = "agentls before"
CODEX = "Codex app-server"
BARE = "bare pygls"
SDK_TYPED = "openai SDK, typed events"
SDK_LINES = "openai SDK, raw lines"


@dataclass
class Series:
    metric: str
    contestant: str
    unit: str
    samples: list[float]
    note: str = ""

    @property
    def summary(self) -> Summary:
        return Summary.of(self.samples)

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "contestant": self.contestant,
            "unit": self.unit,
            "summary": self.summary.to_json(),
            "samples": [round(v, 6) for v in self.samples],
            "note": self.note,
        }


@dataclass
class Target:
    text: str
    measured: str
    limit: str
    met: bool | None  # None: could not be checked (peer missing, smoke run)
    detail: str = ""

    @property
    def verdict(self) -> str:
        if self.met is None:
            return "not checked"
        return "met" if self.met else "MISSED"

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.text,
            "measured": self.measured,
            "limit": self.limit,
            "met": self.met,
            "detail": self.detail,
        }


@dataclass
class Figure:
    key: str
    title: str
    measured_as: str
    series: list[Series] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)  # contestant -> reason

    def add(
        self, metric: str, contestant: str, unit: str, samples: list[float], note: str = ""
    ) -> Series:
        series = Series(metric, contestant, unit, [float(v) for v in samples], note)
        self.series.append(series)
        return series

    def get(self, metric: str, contestant: str) -> Series | None:
        for series in self.series:
            if series.metric == metric and series.contestant == contestant and series.samples:
                return series
        return None

    def p(self, metric: str, contestant: str, q: int = 50) -> float | None:
        series = self.get(metric, contestant)
        if series is None:
            return None
        value = {50: series.summary.p50, 90: series.summary.p90, 99: series.summary.p99}[q]
        return None if math.isnan(value) else value

    def ratio_to_ours(self, series: Series) -> float | None:
        """agentls's p50 divided by this series' p50, same metric."""
        if series.contestant == OURS:
            return None
        return ratio(self.p(series.metric, OURS), series.summary.p50)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "measured_as": self.measured_as,
            "series": [
                {**s.to_json(), "agentls_over_this": _round(self.ratio_to_ours(s))}
                for s in self.series
            ],
            "targets": [t.to_json() for t in self.targets],
            "notes": self.notes,
            "unavailable": self.unavailable,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@dataclass
class Results:
    meta: dict[str, Any] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def figure(self, key: str, title: str, measured_as: str) -> Figure:
        figure = Figure(key, title, measured_as)
        self.figures.append(figure)
        return figure

    def to_json(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "figures": [f.to_json() for f in self.figures],
            "notes": self.notes,
        }
