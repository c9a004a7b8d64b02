"""``update_plan``: the agent records its plan; the editor shows it."""

from __future__ import annotations

from typing import Any

from agentls.tools.base import FunctionTool, ToolArgumentError, ToolContext, ToolResult, get_str
from agentls.tools.workspace import Workspace

STEP_STATUSES = ("pending", "in_progress", "completed")


class UpdatePlan(FunctionTool):
    name = "update_plan"
    read_only = True
    description = (
        "Record your plan for the task as a list of steps with their status. "
        "At most one step is in_progress at a time."
    )
    properties = {
        "explanation": {"type": "string"},
        "plan": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "step": {"type": "string"},
                    "status": {"type": "string", "enum": list(STEP_STATUSES)},
                },
                "required": ["step", "status"],
                "additionalProperties": False,
            },
        },
    }
    required = ("plan",)
    read_only = True

    def title(self, args: dict[str, Any], workspace: Workspace) -> str:
        return "Updating the plan"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        explanation = get_str(args, "explanation", required=False)
        raw = args.get("plan")
        if not isinstance(raw, list):
            raise ToolArgumentError("argument 'plan' must be a list of {step, status}")
        steps: list[dict[str, str]] = []
        for index, entry in enumerate(raw):
            if not isinstance(entry, dict):
                raise ToolArgumentError(f"plan[{index}] must be an object")
            step, status = entry.get("step"), entry.get("status")
            if not isinstance(step, str) or not step.strip():
                raise ToolArgumentError(f"plan[{index}].step must be a non-empty string")
            if status not in STEP_STATUSES:
                raise ToolArgumentError(
                    f"plan[{index}].status must be one of {', '.join(STEP_STATUSES)}"
                )
            steps.append({"step": step, "status": status})
        if sum(step["status"] == "in_progress" for step in steps) > 1:
            raise ToolArgumentError("at most one step may be in_progress")
        ctx.emit_plan(explanation, steps)
        marks = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
        rendered = "\n".join(f"{marks[s['status']]} {s['step']}" for s in steps)
        return ToolResult(output=f"Plan updated.\n{rendered}" if rendered else "Plan updated.")
