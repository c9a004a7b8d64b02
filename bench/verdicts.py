"""How figures are written and checked (shared by the assembling modules)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.figures import Run

MB = 1024 * 1024


def _fmt(value: float | None, unit: str = "ms", digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return f"{value:.{digits}f} {unit}".strip()


def _check(run: Run, ok: bool | None) -> bool | None:
    return None if run.sizes.smoke or ok is None else ok
