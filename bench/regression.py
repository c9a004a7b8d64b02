"""Before and after (``--baseline REV``): the figures a change of the event
path could move, this checkout beside that revision, from the same run.
"No regression" allows what a shared 2-core machine's noise moves a p50
between two runs of the same code: 10 %, and for sub-millisecond latencies
at least 0.1 ms."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.results import BEFORE, OURS, Results, Target
from bench.verdicts import _check, _fmt

if TYPE_CHECKING:
    from bench.figures import Run

NOISE = 0.10
FLOOR_MS = 0.1

# (figure key, metric, unit, percentile, digits)
COMPARED = (
    ("submit", "submit → model request", "ms", 50, 2),
    ("first-delta", "first delta: fake wrote it → client has it", "ms", 50, 3),
    ("throughput", "wall time", "s", 50, 3),
    ("throughput", "CPU time", "s", 50, 3),
    ("cancel", "cancel → cancelled result", "ms", 50, 2),
    ("cancel", "cancel → cancelled result", "ms", 99, 2),
)


def before_after(run: Run, results: Results) -> None:
    figures = {figure.key: figure for figure in results.figures}
    for key, metric, unit, percentile, digits in COMPARED:
        figure = figures.get(key)
        if figure is None:
            continue
        after, before = figure.p(metric, OURS, percentile), figure.p(metric, BEFORE, percentile)
        if after is None or before is None:
            continue
        floor = FLOOR_MS if unit == "ms" else FLOOR_MS / 1000
        limit = before + max(before * NOISE, floor)
        figure.targets.append(
            Target(
                f"{metric} p{percentile}: no regression against the baseline",
                _fmt(after, unit, digits),
                _fmt(limit, unit, digits),
                _check(run, after <= limit),
                f"before: {_fmt(before, unit, digits)} ({after / before:.2f} x)" if before else "",
            )
        )
