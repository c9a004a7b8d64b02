"""Summaries of repeated measurements: median, p90, p99 (linear interpolation)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return float(ordered[low] + (ordered[high] - ordered[low]) * (rank - low))


@dataclass(frozen=True)
class Summary:
    n: int
    p50: float
    p90: float
    p99: float
    min: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        return cls(
            n=len(values),
            p50=percentile(values, 50),
            p90=percentile(values, 90),
            p99=percentile(values, 99),
            min=float(min(values)) if values else math.nan,
            max=float(max(values)) if values else math.nan,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "p50": _finite(self.p50),
            "p90": _finite(self.p90),
            "p99": _finite(self.p99),
            "min": _finite(self.min),
            "max": _finite(self.max),
        }


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


def ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or math.isnan(ours) or math.isnan(theirs) or theirs == 0:
        return None
    return ours / theirs
