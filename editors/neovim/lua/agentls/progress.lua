-- Progress: the server reports each Turn's work with `$/progress` on the
-- workDoneToken of its agent/submit. Neovim's own `$/progress` handler turns
-- that into `LspProgress` events and `vim.lsp.status()`, which is what
-- statusline plugins (lualine, fidget, …) already show: nothing to do for them.
-- This module listens to the same `LspProgress` events (it never consumes
-- vim.lsp.status()) to offer a statusline component of its own.
local config = require("agentls.config")
local util = require("agentls.util")

local M = {}

-- client id -> token -> {pane = Pane|nil, title, message, kind}
local tokens = {}
-- client id -> the latest value of any token (also server-created ones)
local latest = {}

--- A token we gave an agent/submit of `pane`.
function M.track(client_id, token, pane)
  tokens[client_id] = tokens[client_id] or {}
  tokens[client_id][token] = { pane = pane }
end

function M.forget(client_id)
  tokens[client_id] = nil
  latest[client_id] = nil
end

--- The cancel was sent: say so until the server ends the progress.
function M.cancelling(pane)
  for _, by_token in pairs(tokens) do
    for _, entry in pairs(by_token) do
      if entry.pane == pane and entry.kind ~= "end" then
        entry.message = "Cancelling…"
      end
    end
  end
end

function M.on_progress(ev)
  local data = ev.data or {}
  local client_id = data.client_id
  local params = data.params
  if not client_id or type(params) ~= "table" then
    return
  end
  if not require("agentls.connection").by_client[client_id] then
    return
  end
  local value = util.nn(params.value)
  if type(value) ~= "table" or not value.kind then
    return
  end
  tokens[client_id] = tokens[client_id] or {}
  local entry = tokens[client_id][params.token] or {}
  tokens[client_id][params.token] = entry
  entry.kind = value.kind
  entry.title = util.nn(value.title) or entry.title
  entry.message = util.nn(value.message) or entry.message
  if value.kind == "end" then
    tokens[client_id][params.token] = nil
    latest[client_id] = nil
  else
    latest[client_id] = entry
  end
  vim.cmd("redrawstatus!")
end

function M.setup()
  local group = vim.api.nvim_create_augroup("agentls.progress", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = M.on_progress })
end

--- What a pane's running turn is doing now, from its progress.
function M.message(client_id, pane)
  local by_token = tokens[client_id]
  if by_token then
    for _, entry in pairs(by_token) do
      if entry.pane == pane and entry.message then
        return entry.message
      end
    end
  end
  local any = latest[client_id]
  return any and any.message or nil
end

--- The statusline component: what the agent of the current buffer's
--- workspace does now, e.g. `⟳ Running `pytest -q``, `⟳ fork-1: Thinking…`,
--- `⏹ Cancelling…`; `statusline.idle` when nothing runs.
--- @return string
function M.statusline()
  local ok, connection = pcall(require, "agentls.connection")
  if not ok then
    return ""
  end
  local opts = config.options.statusline
  local conn = connection.current()
  if not conn then
    return opts.idle
  end
  local parts, icon = {}, opts.icons.running
  for _, name in ipairs(conn:pane_names()) do
    local pane = conn.panes[name]
    local turn = pane.running
    if turn or #pane.submits > 0 then
      local message
      if turn and turn.status == "cancelling" then
        message, icon = "Cancelling…", opts.icons.cancelling
      else
        message = conn.client_id and M.message(conn.client_id, pane) or nil
        message = message or (turn and "Working" or "Queued")
      end
      parts[#parts + 1] = (name == "main" and "" or (name .. ": ")) .. message
    end
  end
  if #parts == 0 then
    return opts.idle
  end
  local text = table.concat(parts, " | ")
  if icon ~= "" then
    text = icon .. " " .. text
  end
  return text
end

return M
