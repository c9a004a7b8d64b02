-- The compose buffer and the transcript as a daily user meets them: the ask
-- keymap opens a compose buffer; a three-line prompt with #buffer goes out
-- verbatim (the buffer as context); the model's retries are one updating
-- line; a steer written in a compose buffer (<C-s>, with #diagnostics) is
-- admitted while a command runs, and the command's output that comes after
-- it still lands under the command; the turn ends while the transcript is
-- hidden (a notification says so); zo on the command's line opens its output.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup({ keymaps = { prefix = "<leader>a" } })
local api = vim.api

H.edit("src/app.py")
local source_win = api.nvim_get_current_win()
local diagnostics = api.nvim_create_namespace("test.diagnostics")
vim.diagnostic.set(diagnostics, 0, {
  { lnum = 2, col = 11, message = "division by zero when a + b is 0", severity = vim.diagnostic.severity.ERROR },
})

-- Completion of attachments (the compose buffer's 'omnifunc').
local attachments = require("agentls.attachments")
local words = vim.tbl_map(function(item)
  return item.word
end, attachments.complete("#", vim.fn.getcwd()))
H.check(
  vim.deep_equal(words, { "#buffer", "#file:", "#selection", "#diagnostics" }),
  "attachments offered: " .. vim.inspect(words)
)
local paths = vim.tbl_map(function(item)
  return item.word
end, attachments.complete("#file:src/a", vim.fn.getcwd()))
H.check(vim.deep_equal(paths, { "#file:src/app.py" }), "paths offered: " .. vim.inspect(paths))
H.check(#attachments.tokens("see a#buffer or http://x/#selection") == 0, "only words of their own attach")

-- The ask keymap opens the compose buffer in Insert mode; three lines, then
-- <Esc> and <CR> (Normal mode) send them.
api.nvim_feedkeys(vim.keycode("<leader>aaline one<CR>line two #buffer<CR>  line three, indented<Esc>"), "mx", false)
local compose = api.nvim_get_current_buf()
H.check(require("agentls.compose").by_buf[compose], "the compose buffer is open: " .. api.nvim_buf_get_name(compose))
H.check(vim.bo[compose].filetype == "markdown", "markdown")
H.check(vim.wo.winbar:find("Ask main", 1, true), "its winbar says what it does: " .. vim.wo.winbar)
local hints = api.nvim_buf_get_extmarks(compose, -1, 0, -1, { details = true })
local hint = hints[1] and hints[1][4].virt_text[1][1] or ""
H.check(hint:find("src/app.py", 1, true), "#buffer shows what it attaches: " .. vim.inspect(hints))
api.nvim_feedkeys(vim.keycode("<CR>"), "mx", false)
H.check(not api.nvim_buf_is_valid(compose), "sending closed it")
H.check(api.nvim_get_current_win() == source_win, "the cursor is back in the source")

H.wait_text("⟳ Running `echo before")
H.wait_text("> line one\n> line two #buffer\n>   line three, indented")
H.wait_text("> _attached: #buffer src/app.py (3 lines)_")
H.wait_text("  ┃ before")
-- Two retries before the model answered: one line, rewritten.
local text = H.text()
H.check(select(2, text:gsub("model unavailable", "")) == 1, "one retry line:\n" .. text)
H.check(text:find("attempt 3 of ", 1, true), "it shows the last attempt:\n" .. text)

-- A steer from its compose buffer (<C-s> in Insert mode), with #diagnostics.
api.nvim_feedkeys(vim.keycode("<leader>asalso check #diagnostics<C-s>"), "mx", false)
H.wait(function()
  return H.has_message("steer admitted into turn 1")
end, "the steer to be admitted")
H.wait_text("↪ **Steer**: also check #diagnostics · attached #diagnostics · waiting for the model")
-- Hidden while the command still runs.
vim.cmd("AgentToggle")
H.check(#H.windows("main") == 0, "the transcript is hidden")
H.step("steered") -- pytest lets the command go on: it prints "after" and ends

H.wait_text("✓ Completed")
H.wait(function()
  return H.has_message("turn 1 of main completed: Done: both lines%. %(:AgentToggle shows it%)")
end, "the end-of-turn notification")
local lines = api.nvim_buf_get_lines(H.pane().transcript.buf, 0, -1, false)
local tool_row
for i, line in ipairs(lines) do
  if line:find("Running `echo before", 1, true) then
    tool_row = i
  end
end
H.check(tool_row, "the command's line:\n" .. table.concat(lines, "\n"))
H.check(lines[tool_row]:match("^%- ✓ "), "it completed: " .. lines[tool_row])
H.check(
  lines[tool_row + 1] == "  ┃ before" and lines[tool_row + 2] == "  ┃ after",
  "its output, the part after the steer included, is under it:\n" .. table.concat(lines, "\n")
)
H.check(lines[tool_row + 4]:find("Steer", 1, true), "then the steer:\n" .. table.concat(lines, "\n"))
H.check(H.text():find("retried · attempt 3 of", 1, true), "the retry line ends as retried")

-- Shown again: the output is folded; zo on the command's line opens it.
vim.cmd("AgentToggle")
local win = H.windows("main")[1]
api.nvim_set_current_win(win)
api.nvim_win_set_cursor(win, { tool_row, 0 })
H.check(vim.fn.foldclosed(tool_row + 1) ~= -1, "the output is folded")
api.nvim_feedkeys("zo", "mx", false)
H.check(vim.fn.foldclosed(tool_row + 1) == -1, "zo on the command's line opened its output")
H.check(api.nvim_win_get_cursor(win)[1] == tool_row, "the cursor stays on the command's line")
api.nvim_feedkeys("zc", "mx", false)
H.check(vim.fn.foldclosed(tool_row + 1) ~= -1, "zc closes it again")

-- Highlight groups: linked to the standard ones, themable (default links).
local hl = require("agentls.highlights")
H.check(api.nvim_get_hl(0, { name = "AgentlsCompleted" }).link == "DiagnosticOk", "✓ links to DiagnosticOk")
H.check(api.nvim_get_hl(0, { name = "AgentlsFailed" }).link == "DiagnosticError", "✗ links to DiagnosticError")
local marks = hl.transcript_marks(lines[tool_row])
H.check(
  marks[1] and marks[1][3] == "AgentlsCompleted" and marks[1][1] == 2,
  "the ✓ is coloured: " .. vim.inspect(marks)
)
H.check(hl.transcript_marks("**✓ Completed** · 12 tokens in")[1][3] == "AgentlsCompleted", "so is the turn's end")
api.nvim_set_hl(0, "AgentlsCompleted", { fg = "#00ff00" })
hl.link()
H.check(api.nvim_get_hl(0, { name = "AgentlsCompleted" }).fg == 0x00ff00, "a colour you set stays")
H.done()
