"""Reasoning effort: the one setting every layer names, kept in a module of its
own so that answering ``initialize`` need not load the whole configuration."""

from __future__ import annotations

from typing import Literal, get_args

Effort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
DEFAULT_EFFORT: Effort = "medium"
