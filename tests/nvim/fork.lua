-- :AgentFork opens the fork's transcript beside main's; a prompt asked in the
-- fork's transcript goes to the fork; :AgentClosePane closes it.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

H.edit("src/app.py")
local source_win = vim.api.nvim_get_current_win()
vim.cmd("AgentAsk remember 42")
H.wait_text("Main answer: 42.")
H.wait_text("✓ Completed")

-- The layout before the fork: the fork's window takes room from the others
-- while it is open, and gives it back when it closes.
local function widths()
  return vim.tbl_map(vim.api.nvim_win_get_width, vim.api.nvim_tabpage_list_wins(0))
end
local before = widths()
vim.cmd("AgentFork")
H.wait(function()
  return #H.windows("fork-1") == 1
end, "the fork's transcript window")
H.wait(function()
  return H.has_message("forked main into fork%-1")
end, "the fork's confirmation")
local main_win, fork_win = H.windows("main")[1], H.windows("fork-1")[1]
H.check(main_win and fork_win and main_win ~= fork_win, "two transcript windows")
-- Beside main: side by side (vertical split of main's window).
local mp, fp = vim.api.nvim_win_get_position(main_win), vim.api.nvim_win_get_position(fork_win)
H.check(mp[1] == fp[1] and fp[2] > mp[2], "the fork is right of main: " .. vim.inspect({ mp, fp }))
H.wait_text("Forked from main: 1 turn inherited (2 items of history)", "fork-1")
H.wait_text("## What this fork inherited\n\n**You**\n> remember 42\n\nMain answer: 42.", "fork-1")
H.wait_text("Forked here into fork-1", "main")
local names = vim.fn.getcompletion("AgentClosePane ", "cmdline")
H.check(vim.deep_equal(names, { "main", "fork-1" }), "pane completion: " .. vim.inspect(names))

-- Ask in the fork: from its transcript window.
vim.api.nvim_set_current_win(fork_win)
vim.cmd("AgentAsk what number?")
H.wait_text("Fork answer: it was 42.", "fork-1")
H.wait_text("✓ Completed", "fork-1")
H.check(not H.text("main"):find("Fork answer", 1, true), "main's transcript has no fork answer")
H.check(not H.text("main"):find("what number?", 1, true), "main's transcript has no fork prompt")

-- Close it from the source window: the open fork is the default.
vim.api.nvim_set_current_win(source_win)
vim.cmd("AgentClosePane")
H.wait(function()
  return H.pane("fork-1") == nil
end, "the fork pane to close")
H.wait(function()
  return #vim.api.nvim_tabpage_list_wins(0) == 2
end, "the fork's window to close")
H.check(
  vim.deep_equal(widths(), before),
  ("the window sizes came back: %s, not %s"):format(vim.inspect(widths()), vim.inspect(before))
)
H.check(#H.windows("main") == 1, "main's transcript stays")
local fork1_buf = vim.fn.bufnr("agentls://ws/fork-1 (closed)")
H.check(fork1_buf > 0, "the closed fork's buffer stays readable")

-- Fork again, then close main: the fork becomes main.
vim.cmd("AgentFork")
H.wait(function()
  return #H.windows("fork-2") == 1
end, "the second fork's window")
local old_main_buf, fork2_buf = H.pane("main").transcript.buf, H.pane("fork-2").transcript.buf
vim.api.nvim_set_current_win(H.windows("main")[1])
vim.cmd("AgentClosePane")
H.wait(function()
  return H.pane("fork-2") == nil and H.pane("main") and H.pane("main").transcript.buf == fork2_buf
end, "fork-2 to become main")
H.check(H.has_message("fork%-2 is now main"), "the user is told")
H.check(vim.api.nvim_buf_get_name(old_main_buf):find("main (closed)", 1, true), "the old main is marked closed")
H.check(vim.api.nvim_buf_get_name(fork2_buf):find("/main$"), "the promoted transcript is main's")
H.check(#H.windows("main") == 1, "one window shows the new main")
H.check(vim.fn.bufexists("agentls://ws/fork-2") == 0, "no buffer is left with the fork's old name")
H.check(vim.fn.bufexists("agentls://ws/fork-1") == 0, "nor with the first fork's")

-- A new conversation in main: the next request carries nothing from before.
vim.api.nvim_set_current_win(source_win)
vim.cmd("AgentNew")
H.wait_text("New conversation")
vim.cmd("AgentAsk fresh start")
H.wait_text("Fresh answer.")
H.wait_text("✓ Completed")
H.done()
