-- Highlight groups of the transcript and the compose buffer. Each links to a
-- standard group with `default = true`, so a colorscheme or your config that
-- defines the group wins (:help agentls-highlights); they are linked again
-- after every :colorscheme. A decoration provider colours only the lines on
-- screen, so highlighting costs nothing while text streams off screen.
local transcript = require("agentls.transcript")

local api = vim.api
local M = {}

M.groups = {
  AgentlsRunning = "DiagnosticInfo", -- ⟳ a running tool call
  AgentlsCompleted = "DiagnosticOk", -- ✓ a tool call or turn that completed
  AgentlsFailed = "DiagnosticError", -- ✗ failed
  AgentlsCancelled = "DiagnosticWarn", -- ⏹ cancelled
  AgentlsSteer = "DiagnosticHint", -- ↪ a steer
  AgentlsRetry = "DiagnosticWarn", -- ⚠ the model's retry line
  AgentlsOutput = "NonText", -- the ┃ / ┊ gutter of folded output and reasoning
  AgentlsAttachment = "DiffAdd", -- #buffer, #file:…, #selection, #diagnostics
  AgentlsAttachmentError = "DiagnosticError", -- an attachment that cannot be read
  AgentlsHint = "Comment", -- what an attachment resolves to, the compose window's hints
}

local ns = api.nvim_create_namespace("agentls.highlights")
M.ns = ns

--- Buffers to colour: bufnr -> "transcript" | "compose".
--- @type table<integer, string>
M.buffers = {}

local by_icon

local function icon_groups()
  if not by_icon then
    local icons = transcript.icons
    by_icon = {
      [icons.running] = "AgentlsRunning",
      [icons.completed] = "AgentlsCompleted",
      [icons.failed] = "AgentlsFailed",
      [icons.cancelled] = "AgentlsCancelled",
      [icons.steer] = "AgentlsSteer",
      [icons.retry] = "AgentlsRetry",
    }
  end
  return by_icon
end

--- The highlights of one transcript line: a list of {start_col, end_col, group}
--- (byte columns, end exclusive).
--- @param line string
--- @return {[1]: integer, [2]: integer, [3]: string}[]
function M.transcript_marks(line)
  local groups = icon_groups()
  for _, prefix in ipairs({ transcript.OUTPUT, transcript.REASONING }) do
    if line:sub(1, #prefix) == prefix then
      return { { 0, #prefix, "AgentlsOutput" } }
    end
  end
  -- "- ✓ title" (a tool call), "> ↪ **Steer**", "> ⚠ model unavailable", "_⏹ cancel requested"
  local lead, icon = line:match("^([-> _]+)([^%s%w%p]+) ")
  if lead and groups[icon] and #lead <= 2 then
    return { { #lead, #lead + #icon, groups[icon] } }
  end
  -- "**✓ Completed**", "**✗ Failed**: …", "**⏹ Cancelled**"
  local word
  icon, word = line:match("^%*%*([^%s%w%p]+) (%a+)%*%*")
  if icon and groups[icon] then
    return { { 2, 2 + #icon + 1 + #word, groups[icon] } }
  end
  return {}
end

--- Attachments in a compose buffer line (see agentls.attachments).
function M.compose_marks(line)
  local marks = {}
  for _, token in ipairs(require("agentls.attachments").tokens(line)) do
    marks[#marks + 1] = { token.start - 1, token.finish, "AgentlsAttachment" }
  end
  return marks
end

local function on_line(_, _, buf, row)
  local kind = M.buffers[buf]
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1]
  if not line or line == "" then
    return
  end
  local marks = kind == "transcript" and M.transcript_marks(line) or M.compose_marks(line)
  for _, mark in ipairs(marks) do
    api.nvim_buf_set_extmark(buf, ns, row, mark[1], {
      end_col = mark[2],
      hl_group = mark[3],
      ephemeral = true,
    })
  end
end

--- Links the groups (again: after a :colorscheme cleared them).
function M.link()
  for group, target in pairs(M.groups) do
    api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

local initialized = false

--- Colour `buf` as a "transcript" or "compose" buffer (until it is wiped).
function M.attach(buf, kind)
  if not initialized then
    initialized = true
    M.link()
    api.nvim_create_autocmd("ColorScheme", {
      group = api.nvim_create_augroup("agentls.highlights", { clear = true }),
      callback = M.link,
    })
    api.nvim_set_decoration_provider(ns, {
      on_win = function(_, _, buf_)
        return M.buffers[buf_] ~= nil
      end,
      on_line = on_line,
    })
  end
  M.buffers[buf] = kind
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      M.buffers[buf] = nil
    end,
  })
end

return M
