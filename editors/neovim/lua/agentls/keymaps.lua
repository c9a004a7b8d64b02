-- <Plug> mappings, the global keymaps (opt-in: `keymaps.prefix` or a key
-- per action) and the keys of a transcript buffer.
local config = require("agentls.config")

local M = {}

local function call(name, ...)
  local args = { ... }
  return function()
    require("agentls")[name](unpack(args))
  end
end

-- action -> {<Plug> name, {mode = rhs}, description}
M.actions = {
  ask = {
    "AgentAsk",
    { n = call("ask"), x = ":AgentAsk<CR>" },
    "Agent: ask, in the compose buffer (visual: about the selection)",
  },
  steer = { "AgentSteer", { n = call("steer") }, "Agent: steer the running turn" },
  cancel = { "AgentCancel", { n = call("cancel") }, "Agent: cancel the running turn" },
  fork = { "AgentFork", { n = call("fork") }, "Agent: fork the conversation" },
  close_pane = { "AgentClosePane", { n = call("close_pane") }, "Agent: close a pane" },
  effort = { "AgentEffort", { n = call("effort") }, "Agent: set the effort" },
  fast = { "AgentFast", { n = call("fast") }, "Agent: toggle fast mode" },
  new = { "AgentNew", { n = call("new_session") }, "Agent: new conversation" },
  compact = { "AgentCompact", { n = call("compact") }, "Agent: compact the conversation" },
  toggle = { "AgentToggle", { n = call("toggle") }, "Agent: show/hide the transcript" },
}

--- <Plug>(AgentAsk), <Plug>(AgentSteer), … (idempotent).
function M.plugs()
  for _, action in pairs(M.actions) do
    local plug, rhs_by_mode, desc = action[1], action[2], action[3]
    for mode, rhs in pairs(rhs_by_mode) do
      vim.keymap.set(mode, ("<Plug>(%s)"):format(plug), rhs, { silent = true, desc = desc })
    end
  end
end

--- The global keymaps the options ask for: an action's own key, else
--- `keymaps.prefix` and its suffix (config.keymap_suffixes); false: none.
function M.defaults()
  local keys = config.options.keymaps
  if keys == false then
    return
  end
  for name, action in pairs(M.actions) do
    local lhs = keys[name]
    if lhs == nil and keys.prefix then
      lhs = keys.prefix .. config.keymap_suffixes[name]
    end
    if lhs then
      for mode in pairs(action[2]) do
        vim.keymap.set(mode, lhs, ("<Plug>(%s)"):format(action[1]), { desc = action[3] })
      end
    end
  end
end

--- Keys of a transcript buffer: cancel its pane's turn, hide it.
function M.transcript(buf)
  local keys = config.options.keymaps
  if keys == false then
    return
  end
  if keys.transcript_cancel then
    vim.keymap.set("n", keys.transcript_cancel, function()
      require("agentls").cancel()
    end, { buffer = buf, desc = "Agent: cancel this pane's running turn" })
  end
  if keys.transcript_stop_tool then
    vim.keymap.set("n", keys.transcript_stop_tool, function()
      require("agentls").stop_tool()
    end, { buffer = buf, desc = "Agent: stop the command under the cursor (the turn goes on)" })
  end
  if keys.transcript_close then
    vim.keymap.set("n", keys.transcript_close, function()
      require("agentls.transcript").by_buf[buf]:hide()
    end, { buffer = buf, desc = "Agent: hide this transcript" })
  end
end

return M
