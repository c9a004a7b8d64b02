-- agentls for Neovim: a coding agent in the editor, through the built-in
-- vim.lsp client. Public API; every command and keymap calls one of these.
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local M = {}

local initialized = false

--- Autocommands every entry point needs, with or without setup().
local function ensure()
  if initialized then
    return
  end
  initialized = true
  require("agentls.progress").setup()
  require("agentls.edits").setup()
  local group = api.nvim_create_augroup("agentls", { clear = true })
  api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      require("agentls.connection").stop_all()
    end,
  })
end

--- Configure the plugin (every option is optional; see :h agentls-options).
--- Defines the commands and <Plug> mappings (plugin/agentls.lua already
--- did unless your plugin manager skips plugin/ scripts) and the default keymaps.
--- @param opts? agentls.Options
function M.setup(opts)
  config.set(opts)
  ensure()
  require("agentls.commands").create()
  local keymaps = require("agentls.keymaps")
  keymaps.plugs()
  keymaps.defaults()
end

local function target()
  ensure()
  return require("agentls.connection").target(api.nvim_get_current_buf())
end

--- Expands the attachments of a prompt typed on the command line and sends
--- it; errors say which attachment failed, and nothing is sent.
local function send_typed(text, origin, send)
  local prompt, attached, errors = require("agentls.attachments").expand(text, origin)
  if errors then
    util.error("cannot attach " .. table.concat(errors, "; ") .. ": nothing was sent")
    return
  end
  send(text, prompt, attached)
end

local function joined(...)
  local parts = vim.tbl_filter(function(part)
    return part ~= nil and part ~= ""
  end, { ... })
  return #parts > 0 and table.concat(parts, " · ") or nil
end

--- Send a prompt to the agent (a new Turn).
--- @param opts? {prompt?: string, range?: {integer, integer}, pane?: string}
--- `range`: lines (1-based) of the current buffer whose selection goes along
--- as context.selection. Without `prompt`, opens the compose buffer. A prompt
--- may attach context: #buffer, #file:PATH, #selection, #diagnostics.
function M.ask(opts)
  opts = opts or {}
  local bufnr = api.nvim_get_current_buf()
  local conn, pane = target()
  pane = opts.pane or pane
  local context, display
  if opts.range then
    local selection
    selection, display = require("agentls.selection").get(bufnr, opts.range[1], opts.range[2], conn.root)
    context = { selection = selection }
  end
  if config.options.context.documents then
    context = context or {}
    context.documents = require("agentls.selection").documents(conn.root)
  end
  local origin = require("agentls.attachments").origin(conn.root, opts.range)
  origin.selection_in_context = opts.range ~= nil
  local function send(text, prompt, attached)
    conn:submit({ pane = pane, prompt = text, sent = prompt, context = context, display = joined(display, attached) })
  end
  if opts.prompt and opts.prompt:match("%S") then
    send_typed(opts.prompt, origin, send)
  else
    require("agentls.compose").open({
      kind = "ask",
      conn = conn,
      pane = pane,
      origin = origin,
      context = context,
      display = display,
      on_send = send,
    })
  end
end

--- Add a message to the running Turn (a Steer); with no turn running, it starts one.
--- @param opts? {prompt?: string, pane?: string}
--- Without `prompt`, opens the compose buffer.
function M.steer(opts)
  opts = opts or {}
  local conn, pane = target()
  pane = opts.pane or pane
  local origin = require("agentls.attachments").origin(conn.root)
  local function send(_, prompt)
    conn:steer(pane, prompt)
  end
  if opts.prompt and opts.prompt:match("%S") then
    send_typed(opts.prompt, origin, send)
  else
    require("agentls.compose").open({ kind = "steer", conn = conn, pane = pane, origin = origin, on_send = send })
  end
end

--- Cancel the running Turn of a pane (all of its turns with `all`).
--- @param opts? {pane?: string, all?: boolean}
function M.cancel(opts)
  opts = opts or {}
  local conn, pane = target()
  conn:cancel(opts.pane or pane, opts.all)
end

--- Stop the running command under the cursor in a transcript (agent/cancelTool):
--- its processes are killed, the agent gets what it printed so far, and the
--- turn goes on.
function M.stop_tool()
  local bufnr = api.nvim_get_current_buf()
  local t = require("agentls.transcript").by_buf[bufnr]
  if not t then
    util.notify("not in a transcript: put the cursor on a running command's line")
    return
  end
  local tool = t:tool_at(api.nvim_win_get_cursor(0)[1] - 1)
  if not tool then
    util.notify("no command under the cursor")
    return
  end
  if tool.status then
    util.notify(("%s is not running"):format(tool.title))
    return
  end
  local conn, pane = target()
  conn:cancel_tool(pane, tool)
end

--- Fork the pane's conversation into a new pane, shown beside it.
function M.fork(opts)
  opts = opts or {}
  local conn, pane = target()
  conn:fork(opts.pane or pane)
end

--- Close a pane (default: this transcript's pane, else the open fork).
--- Closing main while a fork is open makes the fork the new main; closing
--- main alone starts a new conversation.
function M.close_pane(opts)
  opts = opts or {}
  local conn, pane = target()
  local name = opts.pane
  if not name then
    if require("agentls.transcript").by_buf[api.nvim_get_current_buf()] then
      name = pane
    else
      local fork = conn:fork_pane()
      if not fork then
        util.notify("no fork is open (to start main afresh: :AgentClosePane main or :AgentNew)")
        return
      end
      name = fork.name
    end
  end
  conn:close_pane(name)
end

--- The workspace's MCP servers: list them, or `{"restart", NAME}`, `{"revoke", NAME?}`.
--- @param args? string[]
function M.mcp(args)
  local conn = target()
  require("agentls.mcp").run(conn, args or {})
end

--- The efforts the server accepts (from its capabilities once it runs).
function M.efforts()
  local connection = require("agentls.connection")
  local conn = connection.get(connection.root_of(api.nvim_get_current_buf()), false)
  return (conn and conn.efforts) or config.efforts
end

--- Set the effort of the pane (asks when `effort` is nil).
function M.effort(effort)
  local conn, pane = target()
  local efforts = M.efforts()
  if #efforts == 0 then
    util.notify("the model does not reason: it takes no effort")
    return
  end
  if not effort or effort == "" then
    vim.ui.select(efforts, { prompt = "Effort: " }, function(choice)
      if choice then
        conn:set_effort(pane, choice)
      end
    end)
    return
  end
  if not vim.tbl_contains(efforts, effort) then
    util.error(("unknown effort %q: use one of %s"):format(effort, table.concat(efforts, ", ")))
    return
  end
  conn:set_effort(pane, effort)
end

--- Switches a pane's on/off setting: `value` is true, false, "on", "off",
--- or nil / "toggle" (`current(conn, pane)` tells what it is now).
local function switch(value, current, set)
  local conn, pane = target()
  local enabled
  if value == true or value == "on" then
    enabled = true
  elseif value == false or value == "off" then
    enabled = false
  elseif value == nil or value == "" or value == "toggle" then
    enabled = not current(conn, pane)
  else
    util.error(("expected on, off or toggle, not %q"):format(tostring(value)))
    return
  end
  set(conn, pane, enabled)
end

--- Fast mode of the pane: true, false, "on", "off", or nil / "toggle".
function M.fast(value)
  switch(value, function(conn, pane)
    return conn:fast_mode(pane)
  end, function(conn, pane, enabled)
    conn:set_fast(pane, enabled)
  end)
end

--- Review mode of the pane (each patch waits in a diff view): as `fast`.
function M.review(value)
  switch(value, function(conn, pane)
    return conn:review(pane)
  end, function(conn, pane, enabled)
    conn:set_review(pane, enabled)
  end)
end

--- Start a new conversation in the pane (it must be idle).
function M.new_session()
  local conn, pane = target()
  conn:new_session(pane)
end

--- Continue a stored session in the pane: `which` is a session id (or a
--- unique prefix of 8 or more), "last", or nil to pick one (vim.ui.select).
function M.resume(which)
  local conn, pane = target()
  require("agentls.sessions").resume(conn, pane, which ~= "" and which or nil)
end

--- List the workspace's stored sessions (title, age, turns).
function M.sessions()
  local conn = target()
  require("agentls.sessions").show(conn)
end

--- Delete a stored session (asks which, and to confirm, without `which`).
function M.delete_session(which)
  local conn = target()
  require("agentls.sessions").delete(conn, which ~= "" and which or nil)
end

--- Show or hide a pane's transcript (default: main).
function M.toggle(opts)
  opts = opts or {}
  local conn, pane = target()
  local name = opts.pane or pane
  local p = conn:pane(name, name == "main")
  if not p then
    util.error(("there is no pane %q"):format(name))
    return
  end
  if p.transcript:window() then
    p.transcript:hide()
  else
    conn:show(p, { focus = true })
  end
end

--- Stop the server of this workspace (the next command starts a new one).
function M.stop()
  local conn = target()
  conn:stop()
end

--- The statusline component (see :h agentls-statusline).
function M.statusline()
  return require("agentls.progress").statusline()
end

--- The context meter component: `ctx 12%` (see :h agentls-statusline).
function M.context()
  return require("agentls.context").statusline()
end

--- Compact the pane's conversation now (it must be idle); `focus` says what
--- the summary should keep in particular. Without `focus`, asks for one
--- (an empty answer: nothing in particular).
--- @param opts? {focus?: string, pane?: string}
function M.compact(opts)
  opts = opts or {}
  local conn, pane = target()
  pane = opts.pane or pane
  local context = require("agentls.context")
  if opts.focus ~= nil then
    context.compact(conn, pane, opts.focus)
    return
  end
  vim.ui.input({ prompt = "Compact; keep in particular (Enter: nothing): " }, function(text)
    if text ~= nil then
      context.compact(conn, pane, text)
    end
  end)
end

--- A snapshot of the current workspace's connection: panes, running turns, settings.
function M.status()
  local conn = target()
  return conn:status()
end

--- The transcript buffer of a pane of the current workspace, if it exists.
function M.transcript_buf(pane)
  local conn = target()
  local p = conn.panes[pane or "main"]
  return p and p.transcript.buf or nil
end

return M
