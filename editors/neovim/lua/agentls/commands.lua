-- User commands. Each one calls the public API in agentls/init.lua, which
-- is only loaded when a command runs.
local M = {}

local function agent()
  return require("agentls")
end

local function filter(items, lead)
  return vim.tbl_filter(function(item)
    return item:sub(1, #lead) == lead
  end, items)
end

--- Open panes of the current workspace.
function M.complete_panes(lead)
  local connection = require("agentls.connection")
  local conn = connection.get(connection.root_of(vim.api.nvim_get_current_buf()), false)
  local names = conn and conn:pane_names() or { "main" }
  if #names == 0 then
    names = { "main" }
  end
  return filter(names, lead)
end

function M.complete_efforts(lead)
  return filter(agent().efforts(), lead)
end

function M.complete_fast(lead)
  return filter({ "on", "off", "toggle" }, lead)
end

--- Prompts mention files and attach context: complete the word under the
--- cursor as an attachment (#buffer, #file:PATH, …) or a path.
function M.complete_prompt(lead)
  if lead == "" then
    return {}
  end
  if lead:sub(1, 1) == "#" then
    local connection = require("agentls.connection")
    local root = connection.root_of(vim.api.nvim_get_current_buf())
    return vim.tbl_map(function(item)
      return item.word
    end, require("agentls.attachments").complete(lead, root))
  end
  return vim.fn.getcompletion(lead, "file")
end

M.specs = {
  AgentAsk = {
    function(o)
      agent().ask({ prompt = o.args, range = o.range > 0 and { o.line1, o.line2 } or nil })
    end,
    {
      nargs = "*",
      range = true,
      complete = M.complete_prompt,
      desc = "Ask the agent (with a range: about the selection)",
    },
  },
  AgentSteer = {
    function(o)
      agent().steer({ prompt = o.args })
    end,
    { nargs = "*", complete = M.complete_prompt, desc = "Steer the agent's running turn" },
  },
  AgentCancel = {
    function(o)
      agent().cancel({ pane = o.args ~= "" and o.args or nil, all = o.bang })
    end,
    {
      nargs = "?",
      bang = true,
      complete = M.complete_panes,
      desc = "Cancel the running turn (!: every turn of the pane)",
    },
  },
  AgentStopTool = {
    function()
      agent().stop_tool()
    end,
    { nargs = 0, desc = "Stop the running command under the cursor (in a transcript)" },
  },
  AgentFork = {
    function()
      agent().fork()
    end,
    { nargs = 0, desc = "Fork the conversation into a pane beside it" },
  },
  AgentClosePane = {
    function(o)
      agent().close_pane({ pane = o.args ~= "" and o.args or nil })
    end,
    { nargs = "?", complete = M.complete_panes, desc = "Close a pane (default: this one, else the fork)" },
  },
  AgentEffort = {
    function(o)
      agent().effort(o.args)
    end,
    { nargs = "?", complete = M.complete_efforts, desc = "Set the pane's effort" },
  },
  AgentFast = {
    function(o)
      agent().fast(o.args ~= "" and o.args or nil)
    end,
    { nargs = "?", complete = M.complete_fast, desc = "Fast mode: on, off or toggle" },
  },
  AgentReview = {
    function(o)
      agent().review(o.args ~= "" and o.args or nil)
    end,
    { nargs = "?", complete = M.complete_fast, desc = "Review mode (each patch waits for you): on, off or toggle" },
  },
  AgentNew = {
    function()
      agent().new_session()
    end,
    { nargs = 0, desc = "Start a new conversation in the pane" },
  },
  AgentCompact = {
    function(o)
      agent().compact({ focus = o.args })
    end,
    { nargs = "*", desc = "Compact the conversation (the arguments: what the summary should keep)" },
  },
  AgentResume = {
    function(o)
      agent().resume(o.args)
    end,
    { nargs = "?", desc = "Continue a stored session in this pane (ID, last, or pick one)" },
  },
  AgentSessions = {
    function()
      agent().sessions()
    end,
    { nargs = 0, desc = "List this workspace's stored sessions" },
  },
  AgentDeleteSession = {
    function(o)
      agent().delete_session(o.args)
    end,
    { nargs = "?", desc = "Delete a stored session (ID, or pick one)" },
  },
  AgentToggle = {
    function(o)
      agent().toggle({ pane = o.args ~= "" and o.args or nil })
    end,
    { nargs = "?", complete = M.complete_panes, desc = "Show or hide a transcript" },
  },
  AgentMcp = {
    function(o)
      agent().mcp(o.fargs)
    end,
    {
      nargs = "*",
      complete = function(lead, line)
        return require("agentls.mcp").complete(lead, line)
      end,
      desc = "MCP servers: list them, restart NAME, revoke [NAME]",
    },
  },
  AgentStop = {
    function()
      agent().stop()
    end,
    { nargs = 0, desc = "Stop this workspace's agentls server" },
  },
}

--- Defines every command (again: it is idempotent).
function M.create()
  for name, spec in pairs(M.specs) do
    vim.api.nvim_create_user_command(name, spec[1], spec[2])
  end
end

return M
