"""How many cases to run: ``AGENTLS_FUZZ=small`` (default) or ``long``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, seed, settings

PROFILE = os.environ.get("AGENTLS_FUZZ", "small").strip().lower() or "small"
if PROFILE not in ("small", "long"):
    raise RuntimeError(f"AGENTLS_FUZZ must be 'small' or 'long', not {PROFILE!r}")
LONG = PROFILE == "long"
SEED = os.environ.get("AGENTLS_FUZZ_SEED")

# Per test, on top of pytest-timeout's default: the long run takes minutes.
TIMEOUT = 3600 if LONG else 300

F = TypeVar("F", bound=Callable[..., Any])


def fuzz(small: int, long: int, *, shrink: bool = True) -> Callable[[F], F]:
    """Hypothesis settings for a fuzz test: ``small`` or ``long`` examples, no
    deadline, reproducible (derandomized unless ``AGENTLS_FUZZ_SEED`` is set)."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
    if shrink:
        phases.append(Phase.shrink)
    chosen = settings(
        max_examples=long if LONG else small,
        deadline=None,
        derandomize=SEED is None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )

    def apply(test: F) -> F:
        decorated = chosen(test)
        if SEED is not None:
            decorated = seed(int(SEED))(decorated)
        return decorated

    return apply
