-- The transcript's stop key on a running command's line (agent/cancelTool):
-- only that command stops — its processes killed — and the turn goes on.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

local notes = {}
local notify = vim.notify
vim.notify = function(msg, level)
  notes[#notes + 1] = msg
  notify(msg, level)
end

vim.cmd("AgentAsk run the long command")
H.wait(function()
  return H.text():match("┃ started")
end, "the command's output")
H.step("running") -- pytest sees its sleep running

local win = H.windows("main")[1]
vim.api.nvim_set_current_win(win)
local row = vim.fn.search("Running `echo started", "n")
H.check(row > 0, "the tool line is in the transcript:\n" .. H.text())
vim.api.nvim_win_set_cursor(win, { row, 0 })
vim.api.nvim_feedkeys("x", "mx", false)
H.wait(function()
  for _, msg in ipairs(notes) do
    if msg:find("stopped Running", 1, true) then
      return true
    end
  end
end, "the stop to be confirmed")
local killed
for _, msg in ipairs(notes) do
  killed = killed or tonumber(msg:match("%((%d+) process"))
end
H.wait_text("Went on without it.")
H.wait_text("✓ Completed")
H.check(H.text():find("⏹ Running `echo started", 1, true), "the tool line shows it was cancelled:\n" .. H.text())
H.done({ killed = killed })
