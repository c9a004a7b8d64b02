-- :AgentMcp — the workspace's MCP servers: their status, tools and errors;
-- restart one; take back the permission of a project's server.
--
--   :AgentMcp                 list them (a scratch buffer: r restarts the
--                             server under the cursor, R refreshes, q closes)
--   :AgentMcp restart NAME    stop it and start it again
--   :AgentMcp revoke [NAME]   forget the permission of a project server (all
--                             of the project's without NAME); it asks again
--                             at its next start
local util = require("agentls.util")
local nn = util.nn

local api = vim.api
local M = {}

M.icons = { ready = "✓", starting = "…", failed = "✗", disabled = "⊘" }
M.subcommands = { "restart", "revoke" }

-- While a server is starting, the list refreshes itself this often.
local REFRESH_MS = 500

--- Server names from the last list, for completion.
--- @type string[]
M.names = {}

--- The lines of the list for an agent/mcpServers result.
--- @param result {servers: table[], problems?: string[]}
--- @return string[]
function M.lines(result)
  local servers = nn(result.servers) or {}
  local lines = {}
  if #servers == 0 then
    lines[1] = "No MCP servers are configured."
    lines[2] = "Add them to setup({ mcp_servers = … }), ~/.config/agentls/mcp.json or the project's .mcp.json."
  end
  for _, server in ipairs(servers) do
    local tools = server.tools == 1 and "1 tool" or ("%d tools"):format(server.tools or 0)
    lines[#lines + 1] = ("%s %s  %s · %s · %s, %s"):format(
      M.icons[server.status] or "?",
      server.name,
      server.status,
      tools,
      server.source,
      server.transport
    )
    local runs = nn(server.command) or nn(server.url)
    if runs then
      lines[#lines + 1] = "    " .. runs
    end
    local names = nn(server.toolNames) or {}
    if #names > 0 then
      lines[#lines + 1] = "    tools: " .. table.concat(names, ", ")
    end
    for _, line in ipairs(vim.split(nn(server.error) or "", "\n", { trimempty = true })) do
      lines[#lines + 1] = "    " .. line
    end
    for _, note in ipairs(nn(server.notes) or {}) do
      lines[#lines + 1] = "    note: " .. note
    end
  end
  local problems = nn(result.problems) or {}
  if #problems > 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Configuration problems:"
    for _, problem in ipairs(problems) do
      lines[#lines + 1] = "  " .. problem
    end
  end
  return lines
end

local function starting(result)
  for _, server in ipairs(nn(result.servers) or {}) do
    if server.status == "starting" then
      return true
    end
  end
  return false
end

local function list_buffer()
  local buf = vim.fn.bufnr("agentls://mcp")
  if buf ~= -1 and api.nvim_buf_is_valid(buf) then
    return buf
  end
  buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, "agentls://mcp")
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].filetype = "agentls-mcp"
  return buf
end

--- The server named on line `row` of the list (or the line above it).
local function server_at(buf, row)
  for r = row, 1, -1 do
    local line = api.nvim_buf_get_lines(buf, r - 1, r, false)[1] or ""
    local name = line:match("^%S+ (%S+)  ")
    if name then
      return name
    end
  end
end

--- Fills the list buffer with an agent/mcpServers result.
function M.render(buf, result)
  M.names = vim.tbl_map(function(server)
    return server.name
  end, nn(result.servers) or {})
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, M.lines(result))
  vim.bo[buf].modifiable = false
end

--- :AgentMcp — list the servers of the current workspace.
--- @param conn agentls.Connection
function M.show(conn)
  local buf = list_buffer()
  local function refresh()
    conn:request("agent/mcpServers", vim.empty_dict(), function(result)
      if not api.nvim_buf_is_valid(buf) then
        return
      end
      M.render(buf, result)
      -- Servers start in the background: follow them while the list is shown.
      if starting(result) and vim.fn.bufwinid(buf) ~= -1 then
        vim.defer_fn(refresh, REFRESH_MS)
      end
    end)
  end
  if vim.fn.bufwinid(buf) == -1 then
    vim.cmd("botright split")
    api.nvim_win_set_buf(0, buf)
    api.nvim_win_set_height(0, 12)
  end
  local opts = { buffer = buf, nowait = true, silent = true }
  vim.keymap.set("n", "q", "<cmd>close<cr>", opts)
  vim.keymap.set("n", "R", refresh, opts)
  vim.keymap.set("n", "r", function()
    local name = server_at(buf, api.nvim_win_get_cursor(0)[1])
    if name then
      M.restart(conn, name, refresh)
    end
  end, opts)
  refresh()
end

--- :AgentMcp restart NAME
function M.restart(conn, name, after)
  conn:request("agent/mcpRestart", { name = name }, function(result)
    util.notify(("MCP server %s is %s"):format(name, result.status == "starting" and "restarting" or result.status))
    if after then
      after()
    end
  end)
end

--- :AgentMcp revoke [NAME]
function M.revoke(conn, name)
  conn:request("agent/mcpRevoke", name and { name = name } or vim.empty_dict(), function(result)
    local revoked = nn(result.revoked) or {}
    if #revoked == 0 then
      util.notify("no project MCP server had your permission on record")
    else
      util.notify(("%s may no longer start; asked again at the next start"):format(table.concat(revoked, ", ")))
    end
  end)
end

--- :AgentMcp [restart NAME | revoke [NAME]]
--- @param conn agentls.Connection
--- @param args string[]
function M.run(conn, args)
  local sub, name = args[1], args[2]
  if sub == nil then
    M.show(conn)
  elseif sub == "restart" and name then
    M.restart(conn, name)
  elseif sub == "revoke" then
    M.revoke(conn, name)
  else
    util.error("usage: :AgentMcp [restart NAME | revoke [NAME]]")
  end
end

function M.complete(lead, line)
  local words = vim.split(line, "%s+", { trimempty = true })
  local position = #words + (line:match("%s$") and 1 or 0)
  local items = position <= 2 and M.subcommands or M.names
  return vim.tbl_filter(function(item)
    return item:sub(1, #lead) == lead
  end, items)
end

--- :checkhealth agentls: the MCP servers of a running client.
--- @param client vim.lsp.Client
--- @param health table vim.health
function M.check(client, health, timeout)
  local response
  if util.has_011 then
    response = client:request_sync("agent/mcpServers", vim.empty_dict(), timeout)
  else
    response = client.request_sync("agent/mcpServers", vim.empty_dict(), timeout)
  end
  if not response or response.err then
    health.warn("MCP servers: no answer (" .. (response and util.describe_error(response.err) or "timeout") .. ")")
    return
  end
  local result = nn(response.result) or {}
  for _, server in ipairs(nn(result.servers) or {}) do
    local text = ("MCP server %s: %s, %d tools (%s, %s)"):format(
      server.name,
      server.status,
      server.tools or 0,
      server.source,
      server.transport
    )
    local why = nn(server.error) or ""
    if server.status == "ready" then
      health.ok(text)
    elseif server.status == "starting" then
      health.info(text)
    elseif server.status == "disabled" then
      health.warn(text .. ": " .. why, { ":AgentMcp restart " .. server.name .. " asks again" })
    else
      health.error(text .. ": " .. why, {
        "fix the command or URL of the server, then :AgentMcp restart " .. server.name,
        "see docs/mcp.md in the agentls repository",
      })
    end
  end
  for _, problem in ipairs(nn(result.problems) or {}) do
    health.warn("MCP configuration: " .. problem)
  end
end

return M
