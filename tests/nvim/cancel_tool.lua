-- :AgentCancel while a tool runs `sleep`: the state changes at once (Neovim
-- never calls the handler of a cancelled request), the transcript shows the
-- cancellation with its Receipt (from turn.finished), the process is gone, and
-- the pane goes on working.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

vim.cmd("AgentAsk run the sleeper")
H.wait(function()
  return H.text():match("┃ waiting")
end, "the tool's output")
local text = H.text()
H.check(text:find("- ⟳ Running `sleep 300", 1, true), "a one-line tool entry, running:\n" .. text)
-- The output is folded under its tool line in the transcript window.
local win = H.windows("main")[1]
local folds = vim.api.nvim_win_call(win, function()
  local row = vim.fn.search("┃ started", "n")
  return { entry = vim.fn.foldclosed(row - 1), output = vim.fn.foldclosed(row) }
end)
H.check(folds.entry == -1 and folds.output > 0, "the tool output is folded, its entry is not")

H.step("running") -- pytest checks the command's sleep runs

-- Cancel from the transcript buffer with its <C-c> key.
vim.api.nvim_set_current_win(win)
vim.api.nvim_feedkeys(vim.keycode("<C-c>"), "mx", false)
local pane = H.pane("main")
H.check(pane.running and pane.running.status == "cancelling", "cancelling at once")
H.check(require("agentls").statusline():find("Cancelling", 1, true), "the statusline says cancelling")
H.wait_text("⏹ Cancelled")
H.wait_text("Receipt: aborted `exec_command` (call_sleep)")
local receipt = H.text():match("Receipt: [^\n]*")
H.check(receipt:find("killed %d+ process"), "the receipt counts killed processes: " .. receipt)
H.check(receipt:find("0 still running", 1, true), "nothing survived: " .. receipt)
H.check(H.text():find("- ⏹ Running `sleep 300", 1, true), "the tool entry shows it was cancelled")
H.check(pane.running == nil and #pane.submits == 0, "no turn left running")
for _, m in ipairs(H.messages) do
  H.check(m.level < vim.log.levels.WARN, "no warning or error: " .. m.msg)
end

H.step("cancelled") -- pytest checks it is gone
vim.cmd("wincmd p")
vim.cmd("AgentAsk continue")
H.wait_text("Continuing after the cancel.")
H.wait_text("✓ Completed")

-- :AgentCancel! cancels the running turn and the one waiting behind it.
vim.cmd("AgentAsk hang on")
H.wait_text("> hang on")
vim.cmd("AgentAsk waiting behind")
H.wait(function()
  return H.has_message("queued behind turn 3")
end, "the second prompt to wait")
vim.cmd("AgentCancel!")
-- The waiting prompt is cancelled at once and never starts; the running one stops.
H.wait_text("A queued prompt was cancelled before it started: waiting behind")
H.wait(function()
  return select(2, H.text():gsub("⏹ Cancelled", "")) == 2
end, "the running turn to be cancelled")
H.wait(function()
  return pane.running == nil and #pane.submits == 0
end, "the pane to be idle")
H.done()
