"""What we know about models: context window, the efforts each takes, whether
it reasons at all. Plain data (no imports beyond ``domain``): ``initialize``
reads it to advertise the configured model's efforts.

A model is matched by the longest known prefix of its name (after any
``provider/`` part), so dated snapshots (``gpt-4o-2024-08-06``) and sizes
(``gpt-5-mini``) find their family. Unknown models get generous defaults: every
effort, reasoning on (a server that refuses it is handled by dropping the
parameter, see ``model.client``) and a 128k window; ``contextWindow`` in the
initialization options overrides the window of any model.
"""

from __future__ import annotations

from typing import NamedTuple

from agentls.domain import EFFORTS, Effort


class ModelInfo(NamedTuple):
    context_window: int
    efforts: tuple[Effort, ...]
    reasoning: bool
    known: bool = True


DEFAULT_WINDOW = 128_000

_GPT5 = 272_000  # input tokens of the GPT-5 family (400k in all, 128k of it output)
_LMH: tuple[Effort, ...] = ("low", "medium", "high")

KNOWN: dict[str, ModelInfo] = {
    "gpt-5.2-codex": ModelInfo(_GPT5, ("low", "medium", "high", "xhigh"), True),
    "gpt-5.2": ModelInfo(_GPT5, ("none", "low", "medium", "high", "xhigh"), True),
    "gpt-5.1-codex-max": ModelInfo(_GPT5, ("low", "medium", "high", "xhigh"), True),
    "gpt-5.1-codex-mini": ModelInfo(_GPT5, ("medium", "high"), True),
    "gpt-5.1-codex": ModelInfo(_GPT5, _LMH, True),
    "gpt-5.1": ModelInfo(_GPT5, ("none", "low", "medium", "high"), True),
    "gpt-5-codex": ModelInfo(_GPT5, _LMH, True),
    "gpt-5-pro": ModelInfo(_GPT5, ("high",), True),
    "gpt-5": ModelInfo(_GPT5, ("minimal", "low", "medium", "high"), True),
    "codex-mini": ModelInfo(200_000, _LMH, True),
    "o4-mini": ModelInfo(200_000, _LMH, True),
    "o3": ModelInfo(200_000, _LMH, True),
    "o1": ModelInfo(200_000, _LMH, True),
    "gpt-oss": ModelInfo(131_072, _LMH, True),
    "gpt-4.1": ModelInfo(1_047_576, (), False),
    "gpt-4o": ModelInfo(128_000, (), False),
}

UNKNOWN = ModelInfo(DEFAULT_WINDOW, EFFORTS, True, known=False)


def model_info(name: str) -> ModelInfo:
    base = name.rsplit("/", 1)[-1].lower()
    best = ""
    for prefix in KNOWN:
        if base.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return KNOWN[best] if best else UNKNOWN


def nearest_effort(effort: Effort, efforts: tuple[Effort, ...]) -> Effort | None:
    """The effort the model takes that is closest to ``effort`` (the higher one
    on a tie); None for a model that takes none."""
    if not efforts or effort in efforts:
        return effort if efforts else None
    rank = EFFORTS.index(effort)
    return min(efforts, key=lambda e: (abs(EFFORTS.index(e) - rank), -EFFORTS.index(e)))
