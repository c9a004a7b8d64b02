"""Outgoing JSON: results and ``agent/event`` payloads, built as plain dicts.

Plain dicts because this is the hot path of a fast stream: no converter walk
per event. Optional fields are left out when empty rather than sent as null,
except ``turnId`` of pane events, which the protocol defines as null.
"""

from __future__ import annotations

from typing import Any, cast

from agentls.agent import events as ev
from agentls.agent.receipt import Receipt
from agentls.domain import TurnStatus
from agentls.model.types import ContextSize, Usage
from agentls.schema import wire
from agentls.worker.messages import TurnFinished

JSON = dict[str, Any]


def usage(value: Usage, context: ContextSize | None = None) -> wire.Usage:
    result: wire.Usage = {
        "inputTokens": value.input_tokens,
        "outputTokens": value.output_tokens,
        "reasoningTokens": value.reasoning_tokens,
        "cachedTokens": value.cached_tokens,
    }
    if context is not None:
        result["contextTokens"] = context.tokens
        result["contextWindow"] = context.window
    return result


def receipt(value: Receipt) -> wire.Receipt:
    return {
        "turnId": value.turn_id,
        "abortedToolCalls": [
            {"callId": c.call_id, "tool": c.tool} for c in value.aborted_tool_calls
        ],
        "killedProcesses": value.killed_processes,
        "survivingProcesses": value.surviving_processes,
    }


def citation(value: ev.Citation) -> wire.Citation:
    result: wire.Citation = {"url": value.url}
    if value.title is not None:
        result["title"] = value.title
    if value.start_index is not None:
        result["startIndex"] = value.start_index
    if value.end_index is not None:
        result["endIndex"] = value.end_index
    return result


def turn_result(
    pane: str,
    turn_id: int,
    status: TurnStatus,
    final_message: str,
    error: str | None,
    turn_usage: Usage | None,
    turn_receipt: Receipt | None,
    context: ContextSize | None = None,
    failure: str | None = None,
) -> wire.TurnResult:
    result: wire.TurnResult = {
        "pane": pane,
        "turnId": turn_id,
        "status": status,
        "finalMessage": final_message,
    }
    if error is not None:
        result["error"] = error
    if failure is not None:
        result["failure"] = failure
    if turn_usage is not None:
        result["usage"] = usage(turn_usage, context)
    if turn_receipt is not None:
        result["receipt"] = receipt(turn_receipt)
    return result


def finished_result(finished: TurnFinished) -> wire.TurnResult:
    """The ``TurnResult`` of a turn the worker reported finished."""
    error = finished.error
    if finished.status == "failed" and error is None:
        error = "the turn failed"
    return turn_result(
        finished.pane,
        finished.id,
        finished.status,
        finished.final_message,
        error,
        finished.usage,
        finished.receipt,
        finished.context,
        finished.failure if finished.status == "failed" else None,
    )


def event_payload(event: ev.AgentEvent) -> JSON:
    """The kind-specific fields of an agent event (without pane/turnId/seq)."""
    match event:
        case ev.TextDelta() | ev.ReasoningDelta() | ev.SteerAdmitted() | ev.SteerApplied():
            return {"text": event.text}
        case ev.ToolOutput():
            return {"callId": event.call_id, "text": event.text}
        case ev.TurnStarted():
            return {"prompt": event.prompt, "number": event.number}
        case ev.ToolStarted():
            return {
                "callId": event.call_id,
                "tool": event.tool,
                "title": event.title,
                "arguments": event.arguments,
            }
        case ev.ToolFinished():
            payload: JSON = {"callId": event.call_id, "status": event.status}
            if event.exit_code is not None:
                payload["exitCode"] = event.exit_code
            if event.sources is not None:
                payload["sources"] = event.sources
            if event.diff is not None:
                payload["diff"] = event.diff
            return payload
        case ev.UsageUpdated():
            return cast(JSON, usage(event.usage, event.context))
        case ev.ToolPreparing():
            return {"tool": event.tool, "title": event.title, "chars": event.chars}
        case ev.CompactionStarted():
            return {"reason": event.reason, "beforeTokens": event.before_tokens}
        case ev.CompactionFinished():
            payload = {
                "beforeTokens": event.before_tokens,
                "afterTokens": event.after_tokens,
                "mode": event.mode,
            }
            if event.summary is not None:
                payload["summary"] = event.summary
            return payload
        case ev.Citations():
            return {"citations": [citation(c) for c in event.citations]}
        case ev.Refusal():
            return {"text": event.text}
        case ev.ModelRetry():
            return {
                "attempt": event.attempt,
                "maxAttempts": event.max_attempts,
                "delayMs": round(event.delay * 1000),
                "retryAt": round(event.retry_at * 1000),
                "failure": event.failure,
                "reason": event.reason,
            }
        case ev.PlanUpdated():
            payload = {"plan": [{"step": s.step, "status": s.status} for s in event.plan]}
            if event.explanation is not None:
                payload["explanation"] = event.explanation
            return payload
        case ev.TurnFinished():
            return {
                "status": event.status,
                "finalMessage": event.final_message,
                **({"error": event.error} if event.error is not None else {}),
                **({"failure": event.failure} if event.failure is not None else {}),
                "usage": usage(event.usage, event.context),
                **({"receipt": receipt(event.receipt)} if event.receipt is not None else {}),
            }
    raise TypeError(f"no wire form for {type(event).__name__}")


def event_params(pane: str, seq: int, event: ev.AgentEvent) -> JSON:
    params: JSON = {"pane": pane, "turnId": event.turn_id, "seq": seq, "kind": event.kind}
    params.update(event_payload(event))
    if isinstance(event, ev.TurnFinished):
        params["pane"] = pane  # TurnResult fields include the pane
    return params


def delta_params(
    pane: str, seq: int, kind: str, turn_id: int | None, text: str, call_id: str | None = None
) -> JSON:
    """A coalesced text delta (several events' text joined, in order)."""
    params: JSON = {"pane": pane, "turnId": turn_id, "seq": seq, "kind": kind}
    if call_id is not None:
        params["callId"] = call_id
    params["text"] = text
    return params


def pane_event(pane: str, seq: int, kind: str, **fields: Any) -> JSON:
    return {
        "pane": pane,
        "turnId": None,
        "seq": seq,
        "kind": kind,
        **{k: v for k, v in fields.items() if v is not None},
    }
