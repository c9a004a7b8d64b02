-- A patch's diff in the transcript: folded under its tool line (`zo` on
-- that line opens it), coloured like a diff.
local transcript = require("agentls.transcript")

local M = {}

local GROUPS = { ["+"] = "DiffAdd", ["-"] = "DiffDelete", ["@"] = "DiffChange" }

--- Lines of a unified diff, prefixed so that they fold.
local function lines_of(diff)
  local out = {}
  for _, line in ipairs(vim.split(diff, "\n", { plain = true })) do
    out[#out + 1] = transcript.DIFF .. line:gsub("\r$", "")
  end
  if out[#out] == transcript.DIFF then
    out[#out] = nil
  end
  return out
end

--- Writes `diff` under the tool's line.
--- @param t agentls.Transcript
function M.show(t, tool, diff)
  local lines = lines_of(diff)
  if #lines == 0 then
    return
  end
  if not tool.handle or tool.handle.row ~= t.count - 1 then
    -- Something was written after the tool's line: the diff gets a head of its own.
    table.insert(lines, 1, ("- diff of %s"):format(tool.title))
  end
  local handle = t:lines(lines)
  for i, line in ipairs(lines) do
    local body = line:sub(#transcript.DIFF + 1)
    local group = body:sub(1, 3) ~= "+++" and body:sub(1, 3) ~= "---" and GROUPS[body:sub(1, 1)] or nil
    if group then
      t:highlight(handle.row + i - 1, group)
    end
  end
  t.last_was_tool = true
end

return M
