-- Small helpers shared by every module: version shims, JSON null, messages.
local M = {}

M.has_011 = vim.fn.has("nvim-0.11") == 1

--- The protocol version this plugin speaks (capabilities.experimental.agentls.protocolVersion).
M.PROTOCOL_VERSION = 2

--- JSON null arrives as `vim.NIL` inside tables (and, on 0.12, in more places).
--- @generic T
--- @param value T
--- @return T|nil
function M.nn(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

--- `client:request` on 0.11+, `client.request` on 0.10.
--- @return boolean ok, integer? request_id
function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- @return boolean
function M.cancel_request(client, id)
  if M.has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

--- @return boolean
function M.is_stopped(client)
  if client == nil then
    return true
  end
  if M.has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.stop(client, force)
  if M.has_011 then
    return client:stop(force)
  end
  return client.stop(force)
end

--- Where Neovim logs its LSP clients, the servers' stderr included
--- (`:checkhealth vim.lsp` shows this path too).
--- @return string
function M.lsp_log()
  return vim.fn.fnamemodify(require("vim.lsp.log").get_filename(), ":~")
end

--- Every message the plugin shows goes through here, prefixed and titled.
function M.notify(message, level)
  local function show()
    vim.notify("agentls: " .. message, level or vim.log.levels.INFO, { title = "agentls" })
  end
  if vim.in_fast_event() then
    vim.schedule(show)
  else
    show()
  end
end

function M.warn(message)
  M.notify(message, vim.log.levels.WARN)
end

function M.error(message)
  M.notify(message, vim.log.levels.ERROR)
end

--- The LSP (UTF-16) column of byte offset `byte` (0-based, exclusive) in `line`.
--- @param line string
--- @param byte integer
--- @return integer
function M.utf16_col(line, byte)
  local units, i = 0, 1
  byte = math.min(byte, #line)
  while i <= byte do
    local c = line:byte(i)
    local len = c < 0x80 and 1 or c < 0xE0 and 2 or c < 0xF0 and 3 or 4
    units = units + (len == 4 and 2 or 1)
    i = i + len
  end
  return units
end

--- One line of text, shortened to `max` characters with an ellipsis.
--- @param text string
--- @param max integer
--- @return string
function M.shorten(text, max)
  text = (text or ""):gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  if vim.fn.strchars(text) <= max then
    return text
  end
  return vim.fn.strcharpart(text, 0, max - 1) .. "…"
end

--- `path` relative to `root` when it is inside it.
function M.relative(path, root)
  if root and path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return path
end

--- A human message for a JSON-RPC error of the protocol.
function M.describe_error(err)
  local codes = require("agentls.wire").errors
  local code = type(err) == "table" and err.code or nil
  local message = type(err) == "table" and (err.message or vim.inspect(err)) or tostring(err)
  if code == codes.PaneUnavailable then
    return "that pane is not available any more (" .. message .. ")"
  elseif code == codes.ForkAlreadyOpen then
    return "a fork is already open: close it first with :AgentClosePane"
  elseif code == codes.AgentStopped then
    return "the server is shutting down"
  elseif code == codes.PaneBusy then
    return "busy: " .. message .. " (a pane must be idle: :AgentCancel)"
  elseif code == codes.SessionNotFound then
    return message
  end
  return message
end

return M
