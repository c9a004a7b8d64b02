-- MCP servers in Neovim: setup({ mcp_servers = … }) reaches the server;
-- :AgentMcp lists them (one that cannot start says why); an MCP tool call
-- shows in the transcript as "fx › pid"; :AgentMcp restart restarts one;
-- :checkhealth agentls reports them.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local python = assert(os.getenv("AGENTLS_MCP_PYTHON"), "AGENTLS_MCP_PYTHON is not set")
local fixture = assert(os.getenv("AGENTLS_MCP_FIXTURE"), "AGENTLS_MCP_FIXTURE is not set")
H.setup({
  mcp_servers = {
    fx = { command = python, args = { fixture }, env = {} },
    broken = { command = "agentls-no-such-mcp-server" },
  },
})
H.edit("src/app.py")

local function list()
  local buf = vim.fn.bufnr("agentls://mcp")
  return buf == -1 and "" or table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local function shows(...)
  local text = list()
  for _, needle in ipairs({ ... }) do
    if not text:find(needle, 1, true) then
      return false
    end
  end
  return true
end

vim.cmd("AgentMcp")
-- The list follows the servers while they start.
H.wait(function()
  return shows("✓ fx  ready · 8 tools · options, stdio", "✗ broken  failed")
end, "fx ready and broken failed in the :AgentMcp list")
H.check(shows("command not found", "tools: pid, slow, crash, notes.write"), list())
H.check(vim.tbl_contains(require("agentls.mcp").complete("", "AgentMcp restart "), "fx"), "completion")

vim.cmd("AgentAsk which process are you?")
H.wait_text("fx › pid")
H.wait_text("✓ Completed")

vim.cmd("AgentMcp restart fx")
H.wait(function()
  return H.has_message("MCP server fx is restarting")
end, "the restart to be said")
vim.cmd("bwipeout! agentls://mcp") -- a fresh list: the old one said ready
vim.cmd("AgentMcp")
H.wait(function()
  return shows("✓ fx  ready")
end, "fx ready again")

vim.cmd("checkhealth agentls")
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
H.check(report:find("MCP server fx: ready, 8 tools (options, stdio)", 1, true), report)
H.check(report:find("MCP server broken: failed", 1, true), report)
H.done({ list = list() })
