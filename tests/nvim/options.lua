-- setup() reports every unknown key and invalid value in one ERROR message
-- naming each, applies the valid options, and :checkhealth lists the problems.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local function errors()
  return vim.tbl_filter(function(m)
    return m.level == vim.log.levels.ERROR
  end, H.messages)
end

-- A valid setup says nothing, and sets no global keymap (they are opt-in).
H.setup({
  approval = "on-request",
  sandbox = "read-only",
  network = true,
  idle_timeout = 45,
  transcript = { position = "left" },
})
H.check(#errors() == 0, "a valid setup is silent: " .. vim.inspect(H.messages))
local global = vim.tbl_filter(function(map)
  return map.rhs and map.rhs:find("<Plug>(Agent", 1, true) and not map.lhs:find("<Plug>", 1, true)
end, vim.list_extend(vim.api.nvim_get_keymap("n"), vim.api.nvim_get_keymap("x")))
H.check(#global == 0, "no global keymap by default: " .. vim.inspect(global))
local config = require("agentls.config")
H.check(config.options.approval == "on-request", "approval is kept")
local init = config.init_options("/ws")
H.check(init.approval == "on-request", "approval is an initialization option")
H.check(init.sandbox == "read-only" and init.network == true, "so are sandbox and network: " .. vim.inspect(init))
H.check(init.idleTimeout == 45, "and the idle timeout")

H.setup({
  approvl = "always", -- a typo
  effort = "max",
  fast_mode = "yes",
  transcript = { postion = "top", size = -1, focus = true },
  keymaps = { thinking = "<leader>at", fork = 3 },
  statusline = { icons = { running = 1 } },
  model = "kept-model",
  sandbox = "on",
  network = "yes",
  idle_timeout = 0,
})
local errs = errors()
H.check(#errs == 1, "one message: " .. vim.inspect(errs))
local msg = errs[1].msg
for _, needle in ipairs({
  "unknown option `approvl`",
  'option `effort`: expected one of "none", "minimal", "low", "medium", "high", "xhigh", got "max"',
  'option `fast_mode`: expected a boolean, got "yes"',
  "unknown option `transcript.postion`",
  "option `transcript.size`: expected a positive number, got -1",
  "unknown option `keymaps.thinking`",
  "option `keymaps.fork`: expected a key (string) or false, got 3",
  "option `statusline.icons.running`: expected a string, got 1",
  'option `sandbox`: expected one of "workspace-write", "read-only", "off", got "on"',
  'option `network`: expected a boolean, got "yes"',
  "option `idle_timeout`: expected a positive number of seconds, got 0",
}) do
  H.check(msg:find(needle, 1, true), ("the message names %s: %s"):format(needle, msg))
end
-- The valid options still apply; the bad ones keep their defaults.
local o = config.options
H.check(o.model == "kept-model" and o.transcript.focus == true, "valid options apply: " .. vim.inspect(o.transcript))
H.check(o.effort == nil and o.fast_mode == nil and o.transcript.size == 0.4, "bad values are left out")
H.check(o.transcript.postion == nil and o.approvl == nil and o.keymaps.thinking == nil, "unknown keys are left out")
H.check(o.keymaps.fork == nil and o.keymaps.prefix == false, "keymaps.fork keeps its default (none)")

-- Not a table at all.
require("agentls").setup("always")
H.check(H.has_message("setup%(%) expects a table of options", vim.log.levels.ERROR), "a non-table is refused")
H.check(o ~= config.options and config.options.model == nil, "and the defaults apply")

-- :checkhealth shows what the last setup() left out.
H.messages = {}
H.setup({ approval = "sometimes" })
H.check(H.has_message("option `approval`: expected one of", vim.log.levels.ERROR), "a bad approval is named")
vim.cmd("checkhealth agentls")
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
H.check(report:find("setup(): option `approval`", 1, true), "the health report:\n" .. report)
H.done()
