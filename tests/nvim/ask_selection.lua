-- :'<,'>AgentAsk from a visual selection: the transcript shows the prompt and
-- the answer as it streams; progress reaches LspProgress / vim.lsp.status().
-- Then a very fast stream: drawn in batches.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup({ keymaps = { prefix = "<leader>a" } })

H.edit("src/app.py")
local source = vim.api.nvim_get_current_buf()
-- Charwise, from "total" on line 2 to the end of line 3, then the ask keymap
-- of visual mode (<leader>aa → <Plug>(AgentAsk) → :'<,'>AgentAsk), which
-- opens the compose buffer (in Insert mode) about the selection; <Esc><CR>
-- sends what was typed.
vim.api.nvim_feedkeys(vim.keycode("2G0wvj$<leader>aaexplain this<Esc><CR>"), "mx", false)
H.check(vim.tbl_isempty(require("agentls.compose").by_buf), "sending closed the compose buffer")

H.wait_text("The ratio ")
local conn = H.connection()
H.check(conn.root == vim.fn.getcwd(), "the root is the workspace (.git): " .. tostring(conn.root))
H.check(not H.text():find("divides", 1, true), "the rest of the answer waits for the gate")
local text = H.text()
H.check(text:find("### You · turn 1", 1, true), "turn header")
H.check(text:find("> explain this", 1, true), "the prompt")
H.check(text:find("selection: src/app.py, lines 2–3", 1, true), "where the selection came from")
-- Progress went the standard way, and our own statusline component shows it.
H.wait(function()
  for _, p in ipairs(H.progress) do
    if p.kind == "begin" and (p.title or ""):find("Agent: explain this", 1, true) then
      return true
    end
  end
end, "a LspProgress begin for the turn")
H.wait(function()
  return require("agentls").statusline():find("Writing answer", 1, true)
end, "the statusline component to show the progress")
local status = vim.lsp.status()
H.check(status:find("Agent: explain this", 1, true), "vim.lsp.status(): " .. status)

H.step("partial")
H.wait_text("It fails when a + b is zero.")
H.wait_text("✓ Completed")
H.wait(function()
  return require("agentls").statusline() == ""
end, "the statusline to be idle again")
H.check(H.text():find("The ratio divides by the total. It fails when a + b is zero.", 1, true), "the whole answer")

-- The transcript: a nomodifiable markdown buffer in a split; the server is
-- attached to the source file (every file buffer of the workspace), not to it.
local pane = H.pane("main")
H.check(#H.windows("main") == 1, "the transcript is shown")
H.check(vim.bo[pane.transcript.buf].filetype == "markdown", "markdown")
H.check(not vim.bo[pane.transcript.buf].modifiable, "nomodifiable")
H.check(#vim.lsp.get_clients({ bufnr = source }) == 1, "the server is attached to the source buffer")
H.check(#vim.lsp.get_clients({ bufnr = pane.transcript.buf }) == 0, "not to the transcript")
H.check(vim.api.nvim_get_current_buf() == source, "the cursor stays in the source")
local ends = vim.tbl_filter(function(p)
  return p.kind == "end"
end, H.progress)
H.check(#ends == 1 and ends[1].message == "Done", "one progress end: Done")

-- A fast stream (20000 deltas) is drawn in batches, not per delta.
local before = pane.transcript.stats.flushes
vim.cmd("AgentAsk stream")
H.wait(function()
  return select(2, H.text():gsub("✓ Completed", "")) == 2
end, "the streamed turn to complete")
local xs = H.text():match("\n(x+)\n")
H.check(xs and #xs == 20000, "all 20000 characters, in order, on one line")
H.done({ flushes = pane.transcript.stats.flushes - before })
