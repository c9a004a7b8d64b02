-- The context window, compactions, sources and refusals: the agent/event kinds
-- of protocol version 2's model side, and the context meter (a statusline
-- component and the transcript's "Completed" lines).
local transcript = require("agentls.transcript")
local util = require("agentls.util")

local nn = util.nn
local M = {}

--- A token count the way people read it: 950, 12.3k, 272k, 1.0M.
function M.tokens(count)
  count = tonumber(count) or 0
  if count < 1000 then
    return tostring(count)
  elseif count < 100000 then
    return ("%.1fk"):format(count / 1000)
  elseif count < 1000000 then
    return ("%dk"):format(math.floor(count / 1000))
  end
  return ("%.1fM"):format(count / 1000000)
end

--- "12.3k of 272k tokens (5%)" for a {tokens, window} reading.
function M.describe(meter)
  local share = meter.window > 0 and math.floor(100 * meter.tokens / meter.window + 0.5) or 0
  return ("%s of %s tokens (%d%%)"):format(M.tokens(meter.tokens), M.tokens(meter.window), share), share
end

--- The meter reading a usage event or TurnResult.usage carries, if any.
function M.reading(usage)
  usage = nn(usage)
  if type(usage) ~= "table" then
    return nil
  end
  local tokens, window = tonumber(nn(usage.contextTokens)), tonumber(nn(usage.contextWindow))
  if tokens and window then
    return { tokens = tokens, window = window }
  end
end

local function compaction_line(ev, done)
  local before = M.tokens(nn(ev.beforeTokens))
  if not done then
    return ("> %s compacting the conversation (%s tokens)…"):format(transcript.icons.running, before)
  end
  local how = nn(ev.mode) == "trim" and "old tool outputs cut" or "summary"
  return ("> %s compacted the conversation: %s → %s tokens (%s)"):format(
    transcript.icons.completed,
    before,
    M.tokens(nn(ev.afterTokens)),
    how
  )
end

--- Handles the events of this module; true when the event needs nothing else.
--- Usage and turn.finished only update the meter (the connection handles them too).
--- @param conn agentls.Connection
--- @param pane agentls.Pane
--- @param ev agentls.AgentEvent
function M.on_event(conn, pane, ev)
  local kind = ev.kind
  local t = pane.transcript
  if kind == "usage" then
    pane.context = M.reading(ev) or pane.context
    return false
  elseif kind == "turn.finished" then
    pane.context = M.reading(ev.usage) or pane.context
    return false
  elseif kind == "tool.preparing" then
    return true -- the turn's $/progress says it ("Writing a patch…")
  elseif kind == "compaction.started" then
    pane.compaction = t:lines({ compaction_line(ev, false) }, { blank_before = true })
    return true
  elseif kind == "compaction.finished" then
    local line = compaction_line(ev, true)
    if pane.compaction then
      t:set_line(pane.compaction, line)
    else
      t:lines({ line }, { blank_before = true })
    end
    pane.compaction = nil
    local summary = nn(ev.summary)
    if type(summary) == "string" and summary ~= "" then
      -- Folded away under its line, like a tool's output.
      local lines = {}
      for _, text in ipairs(vim.split(summary, "\n", { plain = true })) do
        lines[#lines + 1] = transcript.OUTPUT .. text
      end
      t:lines(lines)
    end
    if pane.context then
      pane.context = { tokens = tonumber(nn(ev.afterTokens)) or 0, window = pane.context.window }
    end
    vim.cmd("redrawstatus!")
    return true
  elseif kind == "message.citations" then
    local lines = { "**Sources**" }
    for i, citation in ipairs(nn(ev.citations) or {}) do
      local title = nn(citation.title)
      lines[#lines + 1] = ("%d. %s%s"):format(i, title and (title .. " — ") or "", tostring(citation.url))
    end
    t:lines(lines, { blank_before = true })
    return true
  elseif kind == "message.refusal" then
    t:note(transcript.icons.failed .. " The model refused.")
    return true
  end
  return false
end

--- The statusline component: how full the context window of the current
--- buffer's pane is, e.g. `ctx 12%`; "" before the first report.
--- @return string
function M.statusline()
  local ok, connection = pcall(require, "agentls.connection")
  local conn = ok and connection.current() or nil
  if not conn then
    return ""
  end
  local t = transcript.by_buf[vim.api.nvim_get_current_buf()]
  local pane = conn.panes[t and t.pane or "main"]
  if not pane or not pane.context then
    return ""
  end
  local _, share = M.describe(pane.context)
  return ("ctx %d%%"):format(share)
end

--- agent/compact on a pane, optionally with a focus for the summary.
function M.compact(conn, pane_name, focus)
  local params = { pane = pane_name }
  if focus and focus:match("%S") then
    params.focus = focus
  end
  conn:request("agent/compact", params, function(result)
    util.notify(
      ("compacted %s: %s → %s tokens (%s)"):format(
        pane_name,
        M.tokens(result.beforeTokens),
        M.tokens(result.afterTokens),
        tostring(result.mode)
      )
    )
  end, function(err)
    util.error("could not compact the conversation: " .. util.describe_error(err))
  end)
end

--- "instructions: 2 files, 3.1 KiB (AGENTS.md, pkg/AGENTS.md)" for an agent/instructions result.
function M.instructions_text(result)
  local files = nn(result.files) or {}
  if #files == 0 then
    return "instructions: no AGENTS.md files"
  end
  local bytes = tonumber(result.bytes) or 0
  local size = bytes < 1024 and ("%d B"):format(bytes) or ("%.1f KiB"):format(bytes / 1024)
  local paths = {}
  for _, file in ipairs(files) do
    paths[#paths + 1] = tostring(file.path)
  end
  local cut = tonumber(nn(result.cutBytes)) or 0
  return ("instructions: %d file%s, %s (%s)%s"):format(
    #files,
    #files == 1 and "" or "s",
    size,
    table.concat(paths, ", "),
    cut > 0 and ("; %d bytes cut to stay within 32 KiB"):format(cut) or ""
  )
end

return M
