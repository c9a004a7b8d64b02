-- The context window in Neovim: the meter (statusline component and the
-- transcript's "Completed" line), a compaction as its own transcript entry,
-- :AgentCompact with a focus, web-search sources and citations (URLs that
-- gx opens), a refusal, and a model without efforts.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup({ context_window = 6000, web_search = true })

H.check(require("agentls").context() == "", "no meter before the first report")

-- A large output: the next request would not fit, so the server compacts first.
vim.cmd("AgentAsk print the big file")
H.wait_text("✓ Completed")
local text = H.text()
H.check(text:find("compacted the conversation: ", 1, true), "the compaction entry")
H.check(text:find("(summary)", 1, true), "its mode")
H.check(text:find("  ┃ Summary: printed a big file.", 1, true), "its summary, folded under it")
H.check(text:find("· context [%d.k]+ of 6.0k tokens %(%d+%%%)"), "the meter on the Completed line")
H.check(require("agentls").context():match("^ctx %d+%%$"), "the statusline component: " .. require("agentls").context())

-- On request, with a focus.
vim.cmd("AgentCompact the big file")
H.wait(function()
  return H.has_message("compacted main: ")
end, "the compaction to be confirmed")
H.wait(function()
  return select(2, H.text():gsub("compacted the conversation", "")) == 2
end, "a second compaction entry")
H.step("compacted")

-- Sources and citations: plain URLs, one per line.
vim.cmd("AgentAsk search the web")
H.wait(function()
  return select(2, H.text():gsub("✓ Completed", "")) == 2
end, "the second turn to complete")
text = H.text()
H.check(text:find("Searched the web: agentls", 1, true), "the search as a tool call")
H.check(text:find("**Sources**\n1. A — https://example.com/a", 1, true), "the citations:\n" .. text)

vim.cmd("AgentAsk do something bad")
H.wait_text("The model refused.")
H.done()
