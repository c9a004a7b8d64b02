-- Edits through the editor: the agent's patch to a buffer with unsaved
-- changes merges into it (it stays modified, unsaved) and `u` undoes it; a
-- clean buffer it edits is saved; a file a command changed on disk is
-- reloaded, and said so; the diff folds under the tool line; the model reads
-- what vim.diagnostic holds; in review mode a rejected patch leaves the file
-- as it was.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local api = vim.api

local function buf_lines(path)
  return api.nvim_buf_get_lines(vim.fn.bufnr(path), 0, -1, false)
end

-- The user's unsaved line in app.py; notes.txt open and clean; log.txt open
-- (a command rewrites it on disk).
H.edit("src/app.py")
local app = api.nvim_get_current_buf()
api.nvim_buf_set_lines(app, -1, -1, false, { "# mine, unsaved" })
vim.cmd("split notes.txt")
local notes = api.nvim_get_current_buf()
vim.cmd("split log.txt")
local log = api.nvim_get_current_buf()
api.nvim_set_current_win(vim.fn.bufwinid(app))
local ns = api.nvim_create_namespace("test.linter")
vim.diagnostic.set(ns, app, {
  {
    lnum = 2,
    col = 11,
    end_lnum = 2,
    end_col = 16,
    severity = vim.diagnostic.severity.ERROR,
    message = "division by zero?",
    source = "mylint",
  },
})

H.setup({})
vim.cmd("AgentAsk fix the ratio")
H.wait_text("✓ Completed")

-- The agent's change merged into the modified buffer, which stays modified.
local lines = buf_lines("src/app.py")
H.check(lines[3] == "    return a / total if total else 0.0", "the agent's line: " .. vim.inspect(lines))
H.check(lines[4] == "# mine, unsaved", "the user's unsaved line kept: " .. vim.inspect(lines))
H.check(vim.bo[app].modified, "a buffer the user modified is not saved for them")
-- The clean buffer was saved; the one a command changed on disk reloaded.
H.check(not vim.bo[notes].modified, "notes.txt saved after the agent's edit")
H.check(buf_lines("log.txt")[1] == "rewritten by a command", "log.txt reloaded: " .. vim.inspect(buf_lines("log.txt")))
H.check(H.has_message("reloaded log.txt"), "the reload is said")

-- The diff of the patch is in the transcript, folded under its tool line.
local pane = H.pane()
local tbuf = pane.transcript.buf
local tlines = api.nvim_buf_get_lines(tbuf, 0, -1, false)
local tool_row, diff_row
for i, line in ipairs(tlines) do
  if not tool_row and line:find("Editing src/app.py", 1, true) then
    tool_row = i
  end
  if not diff_row and line:find("│ +    return a / total if total else 0.0", 1, true) then
    diff_row = i
  end
end
H.check(tool_row and diff_row and diff_row > tool_row, "the diff under the tool line:\n" .. table.concat(tlines, "\n"))
local win = vim.fn.bufwinid(tbuf)
H.check(win ~= -1, "the transcript is shown")
local folds = api.nvim_win_call(win, function()
  return { tool = vim.fn.foldlevel(tool_row), diff = vim.fn.foldlevel(diff_row), closed = vim.fn.foldclosed(diff_row) }
end)
H.check(
  folds.tool == 1 and folds.diff == 1 and folds.closed == tool_row,
  "the diff folds under its tool line: " .. vim.inspect(folds)
)

-- `u` in app.py undoes the agent's edit, and only it.
api.nvim_set_current_win(vim.fn.bufwinid(app))
vim.cmd("normal! u")
lines = buf_lines("src/app.py")
H.check(lines[3] == "    return a / total" and lines[4] == "# mine, unsaved", "undo: " .. vim.inspect(lines))

-- Review mode: the patch waits in a diff view; R rejects with a reason.
local reviewed
vim.ui.input = function(opts, on_confirm)
  H.check(opts.prompt:find("reject", 1, true), "a reason is asked: " .. opts.prompt)
  on_confirm("keep the old wording")
end
vim.cmd("AgentReview on")
H.wait(function()
  return H.connection():review("main")
end, "review mode on")
vim.cmd("AgentAsk reword the notes")
H.wait(function()
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b):find("agentls://review/1/patched/notes.txt", 1, true) then
      reviewed = api.nvim_buf_get_lines(b, 0, -1, false)
      return true
    end
  end
end, "the review diff view")
H.check(vim.wo.diff, "a diff view")
H.check(reviewed[1] == "reworded notes", "the right side shows the patched text: " .. vim.inspect(reviewed))
api.nvim_feedkeys("R", "x", false)
H.wait_text("Rejected.")
H.check(
  buf_lines("notes.txt")[1] == "agent notes",
  "rejected: the buffer as it was: " .. vim.inspect(buf_lines("notes.txt"))
)
H.done({ review_tabs = #api.nvim_list_tabpages() })
