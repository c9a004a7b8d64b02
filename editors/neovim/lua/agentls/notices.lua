-- What the user is told outside the transcript: the end of a turn whose
-- transcript is not on screen (hidden, or never shown), so a long turn can
-- run out of sight.
local transcript = require("agentls.transcript")
local util = require("agentls.util")

local M = {}

--- A message for a turn that ended while no window shows its transcript.
--- @param pane agentls.Pane
--- @param turn agentls.Turn
--- @param result table the TurnResult fields
function M.turn_finished(pane, turn, result)
  if result.status == "lost" or #vim.fn.win_findbuf(pane.transcript.buf) > 0 then
    return -- a lost turn: the server's exit has its own message
  end
  local label = ("turn %d of %s"):format(transcript.number(turn), pane.name)
  local show = (" (:AgentToggle%s shows it)"):format(pane.name == "main" and "" or (" " .. pane.name))
  if result.status == "completed" then
    local answer = util.nn(result.finalMessage) or ""
    local first = util.shorten(answer:match("^%s*([^\n]*)") or "", 80)
    util.notify(label .. " completed" .. (first ~= "" and (": " .. first) or "") .. show)
  elseif result.status == "cancelled" then
    util.warn(label .. " was cancelled" .. show)
  else
    local err = util.nn(result.error) or "unknown error"
    util.error(label .. " failed: " .. util.shorten(tostring(err), 200) .. show)
  end
end

return M
