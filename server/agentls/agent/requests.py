"""What every model request of one conversation carries — the system
instructions for the policy in force, the tool definitions, the whole
conversation, the settings — and how full the context window is."""

from __future__ import annotations

from typing import Any

from agentls.agent import instructions as system_prompt
from agentls.agent import project_docs
from agentls.agent.context import ContextMeter, fixed_tokens
from agentls.agent.history import History
from agentls.agent.settings import Settings
from agentls.config import AgentConfig
from agentls.model.client import ResponsesClient
from agentls.model.models import model_info
from agentls.model.types import ContextSize, ModelRequest
from agentls.tools.registry import ToolBox
from agentls.tools.shell import Shell
from agentls.tools.workspace import Workspace

WEB_SEARCH_TOOL: dict[str, Any] = {"type": "web_search"}


class Requests:
    """Builds one conversation's model requests (``request()``) and estimates
    their size (``context_size()``)."""

    def __init__(
        self,
        model: ResponsesClient,
        config: AgentConfig,
        settings: Settings,
        history: History,
        tools: ToolBox,
        shell: Shell,
        workspace: Workspace,
        *,
        project: project_docs.ProjectDocs | None,
        background: bool,
        cache_key: str,
    ) -> None:
        self._model = model
        self._config = config
        self._settings = settings
        self._history = history
        self._tools = tools
        self._shell = shell
        self._workspace = workspace
        self._background = background
        self._cache_key = cache_key
        # The session's environment and project instructions (read when it
        # starts and again after each compaction).
        self._environment = system_prompt.Environment.here(workspace.root)
        self.project = project if project is not None else project_docs.load(workspace.root)
        self._instructions: tuple[system_prompt.Policy, str] | None = None
        # What confines commands, as last learnt (``refresh_policy``).
        self._sandbox = (False, True, False)
        self.meter = ContextMeter()

    @property
    def context_window(self) -> int:
        return self._config.context_window or model_info(self._model.config.model).context_window

    async def refresh_policy(self) -> None:
        """Learn what confines commands now (the sandbox may have failed to
        start), for the next request's instructions."""
        sandbox = await self._shell.state()
        self._sandbox = (sandbox.active, sandbox.writable, self._config.sandbox.network)

    def reload_project(self) -> None:
        """Read the project instructions again (after a compaction)."""
        self.project = project_docs.load(self._workspace.root)
        self._instructions = None

    def instructions(self) -> str:
        """The system instructions for the policy in force now."""
        sandboxed, writable, network = self._sandbox
        policy = system_prompt.Policy(self._settings.approval, sandboxed, writable, network)
        cached = self._instructions
        if cached is None or cached[0] != policy:
            text = system_prompt.build(self._environment, policy, self.project)
            cached = self._instructions = (policy, text)
        return cached[1]

    def tool_specs(self) -> list[dict[str, Any]]:
        specs = self._tools.specs
        return [*specs, WEB_SEARCH_TOOL] if self._settings.web_search else specs

    def fixed_tokens(self) -> int:
        """The estimate of what every request carries besides the conversation."""
        return fixed_tokens(self.instructions(), self.tool_specs())

    def context_size(self) -> ContextSize:
        """How full the window is: the estimated size of the next request."""
        tokens = self.meter.estimate(self._history.items(), self.fixed_tokens())
        return ContextSize(tokens, self.context_window)

    def request(self, *, tool_choice: str = "auto") -> ModelRequest:
        """The next model request: the whole conversation and the settings in force."""
        return ModelRequest(
            input=self._history.items(),
            tools=self.tool_specs(),
            instructions=self.instructions(),
            effort=self._settings.effort,
            fast_mode=self._settings.fast_mode,
            background=self._background,
            cache_key=self._cache_key,
            tool_choice=tool_choice,
        )
