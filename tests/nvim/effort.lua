-- :AgentEffort high and :AgentFast on reach the next model request; the
-- commands complete their arguments; the <leader>at keymap chooses an effort
-- through vim.ui.select (keymaps are opt-in: here under the prefix <leader>a).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup({ keymaps = { prefix = "<leader>a", fork = "<M-f>", new = false } })

-- Exactly these commands and <Plug> mappings: no alias of an old name.
local commands = vim.fn.getcompletion("Agent", "command")
local expected = {
  "AgentAsk",
  "AgentCancel",
  "AgentClosePane",
  "AgentCompact",
  "AgentDeleteSession",
  "AgentEffort",
  "AgentFast",
  "AgentFork",
  "AgentMcp",
  "AgentNew",
  "AgentResume",
  "AgentReview",
  "AgentSessions",
  "AgentSteer",
  "AgentStop",
  "AgentStopTool",
  "AgentToggle",
}
H.check(vim.deep_equal(commands, expected), "the commands: " .. vim.inspect(commands))
local plugs = {}
for _, map in ipairs(vim.api.nvim_get_keymap("n")) do
  local name = map.lhs:match("^<Plug>%((Agent%a+)%)$")
  if name then
    plugs[#plugs + 1] = name
  end
end
table.sort(plugs)
H.check(
  vim.deep_equal(
    plugs,
    vim.tbl_filter(function(c)
      -- No <Plug> for these: map the command itself (:AgentResume<CR> picks).
      return not vim.tbl_contains(
        {
          "AgentStop",
          "AgentStopTool",
          "AgentMcp",
          "AgentResume",
          "AgentReview",
          "AgentSessions",
          "AgentDeleteSession",
        },
        c
      )
    end, expected)
  ),
  "the <Plug> mappings: " .. vim.inspect(plugs)
)
H.check(vim.fn.maparg("<leader>at", "n") == "<Plug>(AgentEffort)", "<leader>at: " .. vim.fn.maparg("<leader>at", "n"))
H.check(
  vim.fn.maparg("<leader>ax", "n") == "<Plug>(AgentClosePane)",
  "<leader>ax: " .. vim.fn.maparg("<leader>ax", "n")
)
H.check(vim.fn.maparg("<M-f>", "n") == "<Plug>(AgentFork)", "an action's own key wins over the prefix")
H.check(vim.fn.maparg("<leader>af", "n") == "" and vim.fn.maparg("<leader>an", "n") == "", "and false leaves one out")
H.check(vim.deep_equal(vim.fn.getcompletion("AgentFast ", "cmdline"), { "on", "off", "toggle" }), "fast completion")

vim.cmd("AgentAsk one")
H.wait_text("✓ Completed")

-- Efforts come from the server's capabilities once it runs.
local efforts = vim.fn.getcompletion("AgentEffort ", "cmdline")
H.check(vim.deep_equal(efforts, { "none", "minimal", "low", "medium", "high", "xhigh" }), vim.inspect(efforts))
H.check(vim.deep_equal(vim.fn.getcompletion("AgentEffort h", "cmdline"), { "high" }), "prefix completion")

-- The keymap asks which effort.
local offered
vim.ui.select = function(items, opts, on_choice)
  offered = { items = items, prompt = opts.prompt }
  on_choice("low")
end
vim.api.nvim_feedkeys(vim.keycode("<leader>at"), "mx", false)
H.wait(function()
  return H.has_message("effort of main: low")
end, "the keymap's effort to be confirmed")
H.check(offered and offered.prompt == "Effort: " and vim.deep_equal(offered.items, efforts), vim.inspect(offered))

vim.cmd("AgentEffort high")
vim.cmd("AgentFast on")
H.wait(function()
  return H.has_message("effort of main: high") and H.has_message("fast mode of main: on")
end, "both settings to be confirmed")
local status = require("agentls").status()
H.check(status.panes.main.effort == "high" and status.panes.main.fast == true, vim.inspect(status))

vim.cmd("AgentEffort enormous")
H.check(H.has_message("unknown effort", vim.log.levels.ERROR), "a bad effort is refused")

vim.cmd("AgentAsk two")
H.wait(function()
  return select(2, H.text():gsub("✓ Completed", "")) == 2
end, "the second turn to complete")
H.done()
