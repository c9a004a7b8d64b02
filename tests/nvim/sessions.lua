-- Sessions in Neovim, in two runs of Neovim on one workspace (AGENTLS_PHASE):
-- first: a fork shows what it inherited; main's transcript, wiped with
-- :bdelete in the middle of a turn, comes back from agent/history when
-- shown again, and the turn finishes in it. second (a new Neovim): the last
-- session is one command away: :AgentSessions lists it, :AgentResume (a
-- vim.ui.select) brings it back, :AgentResume last after :AgentNew too.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()
H.edit("src/app.py")

local function count(haystack, needle)
  local n, from = 0, 1
  while true do
    local at = haystack:find(needle, from, true)
    if not at then
      return n
    end
    n, from = n + 1, at + #needle
  end
end

if os.getenv("AGENTLS_PHASE") == "first" then
  vim.cmd("AgentAsk remember 42")
  H.wait_text("Main answer: 42.")
  H.wait_text("✓ Completed")

  vim.cmd("AgentFork")
  H.wait_text("What this fork inherited", "fork-1")
  H.wait_text("> remember 42", "fork-1")
  H.wait_text("Main answer: 42.", "fork-1")
  vim.cmd("AgentClosePane fork-1")
  H.wait(function()
    return H.pane("fork-1") == nil
  end, "the fork to close")

  vim.cmd("AgentAsk count slowly")
  H.wait_text("Counting:")
  H.step("streaming")
  local old = H.pane("main").transcript
  vim.cmd("bdelete! " .. old.buf)
  H.check(old:lost(), "the wiped transcript knows it lost its text")
  H.check(#H.windows("main") == 0, "no window shows it")
  vim.cmd("AgentToggle")
  H.wait(function()
    return #H.windows("main") == 1 and not H.pane("main").transcript:lost()
  end, "the transcript to come back")
  H.wait_text("Main answer: 42.")
  H.wait_text("Counting:")
  H.step("rebuilt")
  H.wait_text("Done counting.")
  H.wait(function()
    return count(H.text("main"), "✓ Completed") == 2
  end, "both turns completed in the rebuilt transcript")
  local text = H.text("main")
  H.check(count(text, "> remember 42") == 1, "the first prompt once: " .. text)
  H.check(count(text, "### You · turn 2") == 1, "the second turn once")
  H.check(count(text, "Done counting.") == 1, "the answer once")
  H.done()
else
  local offered
  vim.ui.select = function(items, opts, on_choice)
    offered = vim.tbl_map(opts.format_item or tostring, items)
    on_choice(items[1])
  end
  vim.cmd("AgentSessions")
  H.wait(function()
    return H.has_message("sessions of ") and H.has_message("remember 42 · ")
  end, "the sessions listed")
  H.wait(function()
    return H.has_message(":AgentResume last continues your last session “remember 42”")
  end, "the hint to resume")
  vim.cmd("AgentResume")
  H.wait_text("Resumed “remember 42” (2 turns)")
  H.wait_text("Main answer: 42.")
  H.wait_text("> count slowly")
  H.check(offered and #offered == 1 and offered[1]:find("remember 42 · ", 1, true), vim.inspect(offered))
  H.check(offered[1]:find("2 turns", 1, true), "age and turns: " .. offered[1])
  vim.cmd("AgentAsk and now?")
  H.wait_text("Resumed answer.")
  vim.cmd("AgentNew")
  H.wait_text("New conversation")
  vim.cmd("AgentResume last")
  H.wait_text("Resumed “remember 42” (3 turns)")
  H.done()
end
