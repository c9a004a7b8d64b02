-- :AgentThinking high and :AgentFast on reach the next model request; the
-- commands complete their arguments.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

local commands = vim.fn.getcompletion("Agent", "command")
for _, name in ipairs({
  "AgentAsk",
  "AgentSteer",
  "AgentCancel",
  "AgentFork",
  "AgentClose",
  "AgentThinking",
  "AgentFast",
  "AgentNew",
}) do
  H.check(vim.tbl_contains(commands, name), name .. " is a command")
end
H.check(vim.deep_equal(vim.fn.getcompletion("AgentFast ", "cmdline"), { "on", "off", "toggle" }), "fast completion")

vim.cmd("AgentAsk one")
H.wait_text("✓ Completed")

-- Efforts come from the server's capabilities once it runs.
local efforts = vim.fn.getcompletion("AgentThinking ", "cmdline")
H.check(vim.deep_equal(efforts, { "none", "minimal", "low", "medium", "high", "xhigh" }), vim.inspect(efforts))
H.check(vim.deep_equal(vim.fn.getcompletion("AgentThinking h", "cmdline"), { "high" }), "prefix completion")

vim.cmd("AgentThinking high")
vim.cmd("AgentFast on")
H.wait(function()
  return H.has_message("thinking effort of main: high") and H.has_message("fast mode of main: on")
end, "both settings to be confirmed")
local status = require("agentls").status()
H.check(status.panes.main.effort == "high" and status.panes.main.fast == true, vim.inspect(status))

vim.cmd("AgentThinking enormous")
H.check(H.has_message("unknown effort", vim.log.levels.ERROR), "a bad effort is refused")

vim.cmd("AgentAsk two")
H.wait(function()
  return select(2, H.text():gsub("✓ Completed", "")) == 2
end, "the second turn to complete")
H.done()
