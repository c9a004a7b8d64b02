-- Connections: one server (one vim.lsp client) per workspace root, its Panes and
-- their Turns, and the protocol requests and events that change them.
--
-- State is updated when something happens on our side (a submit sent, a
-- cancel requested) and when the server says so (agent/event). The response
-- to agent/submit is only a fallback: Neovim never calls the handler of a
-- request it cancelled, so everything a turn shows (its status, its Receipt)
-- comes from the turn.finished event.
local config = require("agentls.config")
local transcript = require("agentls.transcript")
local util = require("agentls.util")

local api = vim.api
local nn = util.nn

local M = {}

--- @type table<string, agentls.Connection> by workspace root
M.connections = {}
--- @type table<integer, agentls.Connection> by client id
M.by_client = {}

local CLIENT_NAME = "agentls"
local token_counter = 0

--- @class agentls.Turn
--- @field id integer the server-wide turn id
--- @field number integer|nil its number in the pane's session (turn.started), what users see
--- @field prompt string
--- @field display string|nil
--- @field status "running"|"cancelling"|"completed"|"cancelled"|"failed"|"lost"
--- @field submit table|nil
--- @field tools table<string, table>
--- @field steers table[]

--- @class agentls.Pane
--- @field name string
--- @field transcript agentls.Transcript
--- @field running agentls.Turn|nil
--- @field submits table[] pending agent/submit requests, oldest first
--- @field turns table<integer, agentls.Turn>
--- @field seq integer last agent/event seq seen

--- @class agentls.Connection
--- @field root string
--- @field client_id integer|nil
--- @field panes table<string, agentls.Pane>
local Connection = {}
Connection.__index = Connection

local function redraw_status()
  vim.cmd("redrawstatus!")
end

-- --- which connection, which pane ------------------------------------------------------

local root_cache = {} -- bufnr -> {name, root}

--- The workspace root of a buffer: its transcript's, else found from the root
--- markers (or `root_dir`), else the current directory.
--- @param bufnr integer
--- @return string
function M.root_of(bufnr)
  bufnr = bufnr == 0 and api.nvim_get_current_buf() or bufnr
  local t = transcript.by_buf[bufnr]
  if t then
    return t.root
  end
  local name = api.nvim_buf_get_name(bufnr)
  local cached = root_cache[bufnr]
  if cached and cached.name == name and cached.cwd == vim.fn.getcwd() then
    return cached.root
  end
  local opts = config.options
  local root
  if opts.root_dir then
    root = opts.root_dir(bufnr)
  end
  if not root then
    local source = (name ~= "" and vim.bo[bufnr].buftype == "") and bufnr or vim.fn.getcwd()
    for _, markers in ipairs(opts.root_markers) do
      root = vim.fs.root(source, markers)
      if root then
        break
      end
    end
  end
  root = vim.fs.normalize(root or vim.fn.getcwd())
  root_cache[bufnr] = { name = name, root = root, cwd = vim.fn.getcwd() }
  return root
end

--- The connection of a workspace root (created, not started, when `create`).
--- @return agentls.Connection|nil
function M.get(root, create)
  local conn = M.connections[root]
  if not conn and create then
    conn = setmetatable({
      root = root,
      client_id = nil,
      queue = {},
      panes = {},
      settings = {}, -- effort / fast of main, kept across restarts
      efforts = nil,
      server_info = nil,
      starts = 0,
    }, Connection)
    M.connections[root] = conn
  end
  return conn
end

--- The connection of the current buffer's workspace, if it exists (for
--- statusline components: never creates one).
--- @return agentls.Connection|nil
function M.current()
  return M.get(M.root_of(api.nvim_get_current_buf()), false)
end

--- The connection and pane a command in `bufnr` is about: a transcript's own
--- pane, else "main" of the buffer's workspace.
--- @return agentls.Connection, string
function M.target(bufnr, create)
  bufnr = bufnr or api.nvim_get_current_buf()
  local t = transcript.by_buf[bufnr]
  local conn = M.get(M.root_of(bufnr), create ~= false)
  return conn, t and t.pane or "main"
end

-- --- the server ------------------------------------------------------------------------

--- @return vim.lsp.Client|nil
function Connection:client()
  if not self.client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(self.client_id)
  if not client or util.is_stopped(client) then
    return nil
  end
  return client
end

--- Runs `fn(client)` once the server is up, starting it if needed.
--- @param fn fun(client: vim.lsp.Client)
function Connection:with_client(fn)
  local client = self:client()
  if client and client.initialized and not self.starting then
    fn(client)
    return
  end
  self.queue[#self.queue + 1] = fn
  if not client then
    self:start()
  end
end

function Connection:start()
  local cmd, err = config.server_cmd()
  if not cmd then
    self.queue = {}
    util.error(err)
    return
  end
  local opts = config.options
  self.starts = self.starts + 1
  self.starting = true
  local conf = {
    name = CLIENT_NAME,
    cmd = cmd,
    cmd_env = opts.cmd_env,
    root_dir = self.root,
    workspace_folders = { { uri = vim.uri_from_fname(self.root), name = self.root } },
    init_options = config.init_options(self.root, self.settings),
    capabilities = vim.tbl_deep_extend(
      "force",
      vim.lsp.protocol.make_client_capabilities(),
      { experimental = require("agentls.approval").client_capability },
      require("agentls.edits").client_capabilities
    ),
    handlers = {
      ["agent/requestApproval"] = require("agentls.approval").handler(function(pane_name, text)
        local pane = self.panes[pane_name]
        if pane then
          pane.transcript:note(text)
        end
      end, self.root),
      ["workspace/applyEdit"] = require("agentls.edits").apply_edit,
      ["agent/diagnostics"] = require("agentls.edits").diagnostics,
      ["agent/event"] = function(_, params, ctx)
        local conn = M.by_client[ctx.client_id]
        if conn and type(params) == "table" then
          conn:on_event(params)
        end
      end,
    },
    on_init = function(client, result)
      vim.schedule(function()
        self:initialized(client, result)
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        self:exited(code, signal, client_id)
      end)
    end,
  }
  local client_id
  if util.has_011 then
    client_id = vim.lsp.start(conf, {
      attach = false,
      silent = false,
      reuse_client = function()
        return false
      end,
    })
  else
    client_id = vim.lsp.start_client(conf) -- 0.10: start without attaching to a buffer
  end
  if not client_id then
    self.starting = false
    self.queue = {}
    util.error("could not start the server (" .. table.concat(cmd, " ") .. "); see :checkhealth agentls")
    return
  end
  self.client_id = client_id
  M.by_client[client_id] = self
end

function Connection:initialized(client, result)
  if client.id ~= self.client_id then
    return
  end
  self.starting = false
  local caps = type(result) == "table" and nn(result.capabilities) or nil
  local agent = caps and nn(caps.experimental) and nn(caps.experimental.agentls) or nil
  if type(agent) ~= "table" then
    util.warn("the server does not advertise capabilities.experimental.agentls: is it agentls?")
  else
    if agent.protocolVersion ~= util.PROTOCOL_VERSION then
      util.warn(
        ("the server speaks protocol version %s; this plugin speaks %d"):format(
          tostring(agent.protocolVersion),
          util.PROTOCOL_VERSION
        )
      )
    end
    self.efforts = nn(agent.efforts)
  end
  self.server_info = type(result) == "table" and nn(result.serverInfo) or nil
  require("agentls.edits").attach_all(self, client)
  self:pane("main", true)
  if type(agent) == "table" and nn(agent.attached) == true then
    -- A server that ran on without us: what its panes did comes back.
    for _, name in ipairs(nn(agent.panes) or { "main" }) do
      self:rebuild(self:pane(name, true))
    end
  else
    require("agentls.sessions").hint(self)
  end
  local queue = self.queue
  self.queue = {}
  for _, fn in ipairs(queue) do
    local ok, err = pcall(fn, client)
    if not ok then
      util.error(tostring(err))
    end
  end
end

function Connection:exited(code, signal, client_id)
  if client_id ~= self.client_id then
    return
  end
  M.by_client[client_id] = nil
  self.client_id = nil
  local was_starting = self.starting
  self.starting = false
  local dropped = #self.queue
  self.queue = {}
  require("agentls.progress").forget(client_id)
  local lost = 0
  for name, pane in pairs(self.panes) do
    for _, turn in pairs(pane.turns) do
      if not turn.done then
        lost = lost + 1
        self:finish_turn(pane, { turnId = turn.id, status = "lost" })
      end
    end
    pane.submits, pane.running, pane.seq, pane.turns = {}, nil, 0, {}
    if name == "main" then
      pane.transcript:divider("The server stopped. The next prompt starts a new server and a new conversation.")
    else
      self:drop_pane(pane, "the server stopped")
    end
  end
  redraw_status()
  if self.stopping or vim.v.exiting ~= vim.NIL then
    return
  end
  if self.stop_requested == client_id then
    util.notify("stopped the server for " .. vim.fn.fnamemodify(self.root, ":~"))
    return
  end
  local normal = code == 0 and (signal == 0 or signal == 15)
  if was_starting then
    util.error(
      ("the server failed to start (exit code %d, signal %d)%s. See :checkhealth agentls and the LSP log (%s)."):format(
        code,
        signal,
        dropped > 0 and "; the command was not run" or "",
        util.lsp_log()
      )
    )
  elseif not normal then
    util.error(
      (
        "the server for %s stopped unexpectedly (exit code %d, signal %d)%s. "
        .. "The next command starts a new one. Its last words are in the LSP log (%s)."
      ):format(
        vim.fn.fnamemodify(self.root, ":~"),
        code,
        signal,
        lost > 0 and (", %d turn%s lost"):format(lost, lost == 1 and "" or "s") or "",
        util.lsp_log()
      )
    )
  else
    util.notify("the server stopped")
  end
end

--- Stops the server (the next command starts a new one).
function Connection:stop()
  local client = self:client()
  if not client then
    util.notify("no server is running for " .. vim.fn.fnamemodify(self.root, ":~"))
    return
  end
  self.stop_requested = client.id
  util.stop(client)
end

-- --- panes ------------------------------------------------------------------------------

--- @return agentls.Pane|nil
function Connection:pane(name, create)
  local pane = self.panes[name]
  if not pane and create then
    pane = {
      name = name,
      transcript = transcript.new(self.root, name),
      running = nil,
      submits = {},
      turns = {},
      seq = 0,
      settings = {},
    }
    self.panes[name] = pane
  end
  return pane
end

--- The names of the open panes, main first.
function Connection:pane_names()
  local names = {}
  for name in pairs(self.panes) do
    names[#names + 1] = name
  end
  table.sort(names, function(a, b)
    if a == "main" or b == "main" then
      return a == "main"
    end
    return a < b
  end)
  return names
end

function Connection:fork_pane()
  for name, pane in pairs(self.panes) do
    if name ~= "main" then
      return pane
    end
  end
end

--- Shows the fork's transcript beside main's.
function Connection:show_fork(pane)
  if pane.shown then
    return
  end
  pane.shown = true
  local main = self.panes.main
  if main and not main.transcript:window() then
    main.transcript:show({ focus = false })
  end
  require("agentls.layout").save(pane)
  pane.transcript:show({ beside = main and main.transcript, focus = false })
end

--- A pane the server closed: its transcript stays readable, its windows close.
function Connection:drop_pane(pane, why)
  self.panes[pane.name] = nil
  pane.closed = true
  pane.transcript:note("Pane closed: " .. why .. ".")
  pane.transcript:flush()
  pane.transcript:hide()
  pane.transcript:rename(pane.name, true)
  require("agentls.layout").restore(pane)
end

-- --- events -----------------------------------------------------------------------------

function Connection:check_seq(pane, seq)
  seq = tonumber(nn(seq))
  if not seq then
    return
  end
  if pane.seq > 0 and seq > pane.seq + 1 then
    pane.transcript:note(("%d event(s) were lost here"):format(seq - pane.seq - 1))
  end
  pane.seq = seq
end

function Connection:on_event(ev)
  local kind = ev.kind
  local waiting = self.panes[ev.pane] and self.panes[ev.pane].rebuilding
  if waiting then
    waiting[#waiting + 1] = ev -- applied once the rebuilt transcript has what came before
    return
  end
  if kind == "pane.closed" then
    return self:pane_closed(ev)
  elseif kind == "pane.opened" then
    return self:pane_opened(ev)
  elseif kind == "session.resumed" then
    return self:session_resumed(ev)
  end
  local pane = self:pane(ev.pane, true)
  self:check_seq(pane, ev.seq)
  if require("agentls.context").on_event(self, pane, ev) then
    return
  end
  local turn_id = tonumber(nn(ev.turnId))
  if kind == "turn.started" then
    return self:turn_started(pane, turn_id, nn(ev.prompt) or "", tonumber(nn(ev.number)))
  end
  local turn = turn_id and pane.turns[turn_id]
  if not turn then
    if kind == "turn.finished" and turn_id then
      self:finished_unstarted(pane, turn_id, ev)
    end
    return
  end
  local t = pane.transcript
  if kind == "message.delta" then
    t:answer(turn, nn(ev.text) or "")
  elseif kind == "reasoning.delta" then
    t:reasoning(turn, nn(ev.text) or "")
  elseif kind == "tool.started" then
    local tool = {
      call_id = ev.callId,
      tool = nn(ev.tool) or "tool",
      title = nn(ev.title) or nn(ev.tool) or "tool",
    }
    turn.tools[ev.callId] = tool
    t:tool_started(tool)
    require("agentls.edits").tool_started(self, pane)
  elseif kind == "tool.output" then
    local tool = turn.tools[ev.callId]
    if tool then
      t:tool_output(tool, nn(ev.text) or "")
    end
  elseif kind == "tool.finished" then
    local tool = turn.tools[ev.callId]
    if tool then
      tool.status = nn(ev.status)
      tool.exit_code = nn(ev.exitCode)
      t:tool_finished(tool, tool.status or "completed")
      require("agentls.edits").tool_finished(self, pane, tool, ev)
    end
  elseif kind == "steer.admitted" then
    local steer = { text = nn(ev.text) or "" }
    turn.steers[#turn.steers + 1] = steer
    t:steer_admitted(steer)
  elseif kind == "steer.applied" then
    local text = nn(ev.text) or ""
    local steer
    for _, s in ipairs(turn.steers) do
      if not s.applied and s.text == text then
        steer = s
        break
      end
    end
    steer = steer or { text = text }
    steer.applied = true
    t:steer_applied(steer)
  elseif kind == "usage" then
    -- The end of one model response: what the next one writes is a new paragraph.
    turn.usage = ev
    t:end_block()
  elseif kind == "turn.finished" then
    self:finish_turn(pane, ev)
  elseif kind == "model.retry" then
    t:model_retry(turn, ev)
  elseif kind == "plan.updated" then
    t:plan(ev)
  end
end

--- A turn that ended before it started (cancelled while queued).
function Connection:finished_unstarted(pane, id, result)
  -- Its submit: the oldest cancelled one that never started, else the oldest waiting one.
  local index
  for i, pending in ipairs(pane.submits) do
    if not pending.turn then
      if pending.cancelled then
        index = i
        break
      end
      index = index or i
    end
  end
  local submit = index and table.remove(pane.submits, index) or nil
  local turn = self:new_turn(pane, id, nil, submit)
  turn.done, turn.status, turn.result = true, result.status, result
  -- It never started, so it has no number in the session: named by its prompt.
  local what = submit and (": " .. util.shorten(submit.prompt, 80)) or ""
  if result.status == "cancelled" then
    pane.transcript:note(
      ("%s A queued prompt was cancelled before it started%s"):format(transcript.icons.cancelled, what)
    )
  else
    local err = nn(result.error)
    pane.transcript:note(
      ("%s A queued prompt ended before it started (%s)%s"):format(
        transcript.icons.failed,
        tostring(err or result.status),
        what
      )
    )
  end
  redraw_status()
end

function Connection:new_turn(pane, id, prompt, submit)
  local turn = {
    id = id,
    prompt = submit and submit.prompt or prompt or "",
    display = submit and submit.display or nil,
    submit = submit,
    status = "running",
    tools = {},
    steers = {},
  }
  pane.turns[id] = turn
  return turn
end

--- Which pending submit a started turn belongs to: turns of a pane start in
--- the order they were submitted; a promoted Steer has no submit of ours.
local function match_submit(pane, prompt)
  for i, submit in ipairs(pane.submits) do
    if not submit.turn and prompt:sub(1, #submit.prompt) == submit.prompt then
      -- Anything submitted before it that never started was cancelled while queued.
      for j = i - 1, 1, -1 do
        if not pane.submits[j].turn then
          table.remove(pane.submits, j)
        end
      end
      return submit
    end
  end
end

function Connection:turn_started(pane, id, prompt, number)
  if not id then
    return
  end
  local submit = match_submit(pane, prompt)
  local turn = self:new_turn(pane, id, prompt, submit)
  turn.number = number
  if submit then
    submit.turn = turn
    if submit.cancelled then
      turn.status = "cancelling"
    end
  end
  pane.running = turn
  pane.transcript:turn_started(turn)
  redraw_status()
end

--- @param result table TurnResult fields (turn.finished event, submit response, or status "lost")
function Connection:finish_turn(pane, result)
  local id = tonumber(nn(result.turnId))
  local turn = id and pane.turns[id]
  if not turn or turn.done then
    return
  end
  turn.done = true
  turn.status = result.status
  turn.result = result
  pane.transcript:turn_finished(turn, result)
  if not pane.replaying then
    require("agentls.notices").turn_finished(pane, turn, result)
  end
  if pane.running == turn then
    pane.running = nil
  end
  for i, submit in ipairs(pane.submits) do
    if submit.turn == turn then
      table.remove(pane.submits, i)
      break
    end
  end
  redraw_status()
end

function Connection:pane_opened(ev)
  local name = ev.pane
  local from = nn(ev.promotedFrom)
  local pane = self.panes[name]
  if from then
    -- pane.closed{promotedTo} already moved the fork here.
    if pane then
      self:check_seq(pane, ev.seq)
    end
    return
  end
  local items = tonumber(nn(ev.items)) or 0
  if pane then
    self:check_seq(pane, ev.seq)
  else
    pane = self:pane(name, true)
    pane.seq = tonumber(nn(ev.seq)) or 0
  end
  pane.running, pane.turns = nil, {}
  if name == "main" or items == 0 then
    pane.transcript:divider("New conversation")
    return
  end
  -- A fork (its pane.opened follows the agent/fork answer).
  local main = self.panes.main
  if main then
    pane.settings = vim.deepcopy(main.settings)
  end
  local entries = nn(ev.entries) or {}
  local turns = #vim.tbl_filter(function(entry)
    return entry.role == "user"
  end, entries)
  pane.transcript:note(
    ("Forked from main: %d turn%s inherited (%d item%s of history); what you ask here stays in %s"):format(
      turns,
      turns == 1 and "" or "s",
      items,
      items == 1 and "" or "s",
      name
    )
  )
  pane.transcript:entries("What this fork inherited", entries)
  if not pane.replaying then
    self:show_fork(pane)
  end
end

--- agent/resume: the pane now holds a stored conversation.
function Connection:session_resumed(ev)
  local pane = self:pane(ev.pane, true)
  self:check_seq(pane, ev.seq)
  pane.running, pane.turns = nil, {}
  local turns = tonumber(nn(ev.turns)) or 0
  pane.transcript:divider(("Resumed “%s” (%d turn%s)"):format(nn(ev.title) or "", turns, turns == 1 and "" or "s"))
  pane.transcript:entries("Earlier in this session", nn(ev.entries) or {})
  local notice = nn(ev.notice)
  if notice and notice ~= "" then
    pane.transcript:note(notice)
    if not pane.replaying then
      util.warn(notice)
    end
  end
  redraw_status()
end

--- The pane's transcript, rebuilt from agent/history (its buffer was wiped,
--- or the server ran on without us); live events wait until it is.
function Connection:rebuild(pane, done)
  if pane.rebuilding then
    return
  end
  pane.rebuilding = {}
  local function finish(result)
    local held = pane.rebuilding or {}
    pane.rebuilding = nil
    local old = pane.transcript
    if api.nvim_buf_is_valid(old.buf) then
      pcall(api.nvim_buf_delete, old.buf, { force = true })
    end
    pane.transcript = transcript.new(self.root, pane.name)
    pane.turns, pane.running, pane.seq = {}, nil, 0
    for _, submit in ipairs(pane.submits) do
      submit.turn = nil -- matched again to the turn its events start
    end
    local last = 0
    if result then
      last = tonumber(nn(result.lastSeq)) or 0
      if nn(result.complete) == false then
        pane.transcript:note("The start of this session is no longer kept by the server: the transcript begins later.")
      end
      pane.replaying = true
      for _, ev in ipairs(nn(result.events) or {}) do
        self:on_event(ev)
      end
      pane.replaying = nil
    end
    for _, ev in ipairs(held) do
      if (tonumber(nn(ev.seq)) or 0) > last then
        self:on_event(ev)
      end
    end
    if done then
      done()
    end
  end
  self:request("agent/history", { pane = pane.name, sinceSeq = 0 }, finish, function(err)
    util.error("could not rebuild the transcript: " .. util.describe_error(err))
    finish(nil)
  end)
end

function Connection:pane_closed(ev)
  local pane = self.panes[ev.pane]
  if not pane then
    return
  end
  self:check_seq(pane, ev.seq)
  local to = nn(ev.promotedTo)
  if not to then
    self:drop_pane(pane, "closed")
    return
  end
  -- The fork takes the place of `to` (main): its transcript goes on as main's.
  local old = self.panes[to]
  local old_windows = {}
  if old then
    old_windows = vim.fn.win_findbuf(old.transcript.buf)
    old.closed = true
    old.transcript:note(("Closed; %s continues as %s."):format(pane.name, to))
    old.transcript:flush()
    old.transcript:rename(to, true)
  end
  self.panes[pane.name] = nil
  local from = pane.name
  pane.name = to
  pane.seq = old and old.seq or 0
  self.panes[to] = pane
  pane.transcript:rename(to)
  pane.transcript:note(("%s is now %s."):format(from, to))
  -- Main's windows now show the promoted transcript.
  local shown = pane.transcript:window()
  for _, win in ipairs(old_windows) do
    if shown then
      if #api.nvim_list_wins() > 1 then
        pcall(api.nvim_win_close, win, false)
      end
    else
      api.nvim_win_set_buf(win, pane.transcript.buf)
      shown = win
    end
  end
  require("agentls.layout").restore(pane)
  util.notify(("%s is now %s"):format(from, to))
  redraw_status()
end

-- --- requests ---------------------------------------------------------------------------

local function failed(what)
  return function(err)
    util.error(what .. ": " .. util.describe_error(err))
  end
end

--- Sends a request once the server is up; `on_result(result, client)` on success.
function Connection:request(method, params, on_result, on_error)
  on_error = on_error or failed(method)
  self:with_client(function(client)
    local ok = util.request(client, method, params, function(err, result)
      if err then
        on_error(err)
      elseif on_result then
        on_result(nn(result), client)
      end
    end)
    if not ok then
      on_error({ message = "the server is not running" })
    end
  end)
end

function Connection:open_pane(name)
  local pane = self.panes[name]
  if not pane or pane.closed then
    util.error(("there is no pane %q"):format(name))
    return nil
  end
  return pane
end

--- Sends a prompt to a pane (agent/submit).
--- @param opts {pane: string, prompt: string, sent?: string, context?: table, display?: string}
--- `prompt` as typed (shown in the transcript); `sent`, when it differs, as
--- the model gets it (with its attachments; it starts with `prompt`).
function Connection:submit(opts)
  self:with_client(function(client)
    local pane = self:open_pane(opts.pane)
    if not pane then
      return
    end
    token_counter = token_counter + 1
    local submit = {
      prompt = opts.prompt,
      display = opts.display,
      token = ("agentls-%d"):format(token_counter),
      client_id = client.id,
    }
    local params = {
      pane = pane.name,
      prompt = opts.sent or opts.prompt,
      context = opts.context,
      workDoneToken = submit.token,
    }
    require("agentls.progress").track(client.id, submit.token, pane)
    local ok, id = util.request(client, "agent/submit", params, function(err, result)
      self:submit_answered(pane, submit, err, nn(result))
    end)
    if not ok or not id then
      util.error("could not send the prompt: the server is not running")
      return
    end
    submit.id = id
    pane.submits[#pane.submits + 1] = submit
    if config.options.transcript.open_on_ask then
      self:show(pane)
    end
    if pane.running then
      util.notify(("queued behind turn %d of %s"):format(transcript.number(pane.running), pane.name))
    end
    redraw_status()
  end)
end

function Connection:submit_answered(pane, submit, err, result)
  local id = not err and type(result) == "table" and tonumber(nn(result.turnId)) or nil
  if submit.cancelled and not submit.turn and id and not pane.turns[id] then
    -- Cancelled while queued, answered before its turn.finished event: the
    -- same outcome (the event then finds the turn done).
    self:finished_unstarted(pane, id, result)
    return
  end
  for i, s in ipairs(pane.submits) do
    if s == submit then
      table.remove(pane.submits, i)
      break
    end
  end
  if submit.cancelled then
    return -- cancelled by us: turn.finished carries the outcome and the Receipt
  end
  if err then
    util.error("the prompt failed: " .. util.describe_error(err))
    if submit.turn then
      self:finish_turn(pane, { turnId = submit.turn.id, status = "failed", error = util.describe_error(err) })
    end
    redraw_status()
    return
  end
  if type(result) == "table" and result.turnId then
    self:finish_turn(pane, result) -- a no-op when turn.finished came first (it does)
  end
  redraw_status()
end

--- Cancels the pane's running turn (or, with `all`, every turn of the pane):
--- `$/cancelRequest` on our pending agent/submit, `agent/cancel` for a turn
--- without one (a promoted Steer).
function Connection:cancel(pane_name, all)
  local pane = self.panes[pane_name]
  local client = self:client()
  if not pane or not client then
    util.notify("nothing to cancel")
    return
  end
  local targets = {}
  local running = pane.running
  if all then
    -- Newest first: the waiting prompts are cancelled before the running turn
    -- stops, so none of them can start in between.
    for i = #pane.submits, 1, -1 do
      local submit = pane.submits[i]
      if not submit.cancelled then
        targets[#targets + 1] = submit
      end
    end
  elseif running and running.submit then
    if not running.submit.cancelled then
      targets[1] = running.submit
    end
  elseif not running then
    for _, submit in ipairs(pane.submits) do
      if not submit.cancelled then
        targets[1] = submit
        break
      end
    end
  end
  local orphan = running and not running.submit and running.status == "running"
  if #targets == 0 and not orphan then
    util.notify(running and "the turn is already being cancelled" or "nothing to cancel")
    return
  end
  for _, submit in ipairs(targets) do
    submit.cancelled = true
    util.cancel_request(client, submit.id)
    local turn = submit.turn
    if turn and not turn.done then
      turn.status = "cancelling"
      pane.transcript:cancel_requested(turn)
    elseif not turn then
      pane.transcript:note(
        ("%s cancel requested for a waiting prompt: %s"):format(
          transcript.icons.cancelled,
          util.shorten(submit.prompt, 80)
        )
      )
    end
  end
  if orphan then
    running.status = "cancelling"
    pane.transcript:cancel_requested(running)
    self:request("agent/cancel", { pane = pane.name, turnId = running.id })
  end
  require("agentls.progress").cancelling(pane)
  redraw_status()
end

--- agent/steer: adds `prompt` to the pane's running turn (or starts a turn with it).
function Connection:steer(pane_name, prompt)
  local pane = self.panes[pane_name]
  local params = { pane = pane_name, prompt = prompt }
  if pane and pane.running then
    params.expectedTurnId = pane.running.id
  end
  self:request("agent/steer", params, function(result)
    local p = self.panes[pane_name]
    local turn = p and p.turns[tonumber(result.turnId)]
    local which = turn and ("turn %d"):format(transcript.number(turn)) or "a new turn"
    if result.outcome == "admitted" then
      util.notify(("steer admitted into %s"):format(which))
    else
      util.notify(("no turn was running: your steer started %s"):format(which))
      if p and config.options.transcript.open_on_ask then
        self:show(p)
      end
    end
  end, failed("the steer failed"))
end

function Connection:fork(pane_name)
  self:request("agent/fork", { pane = pane_name }, function(result)
    local pane = self.panes[result.pane]
    if not pane then
      pane = self:pane(result.pane, true)
      local main = self.panes.main
      if main then
        pane.settings = vim.deepcopy(main.settings)
      end
    end
    self:show_fork(pane)
    local parent = self.panes[pane_name]
    if parent then
      parent.transcript:note(("Forked here into %s (beside this transcript)"):format(result.pane))
    end
    util.notify(("forked %s into %s (%d items)"):format(pane_name, result.pane, tonumber(result.items) or 0))
  end, failed("fork failed"))
end

function Connection:close_pane(pane_name)
  self:request("agent/closePane", { pane = pane_name }, function(result)
    local cancelled = tonumber(result.cancelled) or 0
    local pane = self.panes[pane_name]
    if pane and pane_name ~= "main" and not pane.closed then
      self:drop_pane(pane, "closed")
    end
    util.notify(
      ("closed %s%s"):format(
        pane_name,
        cancelled > 0 and (" (%d turn%s cancelled)"):format(cancelled, cancelled == 1 and "" or "s") or ""
      )
    )
  end, failed("close failed"))
end

--- Sends one setting of a pane (`params[field] = value`); once the server
--- took it, remembers it as settings[key] (main's survive a server restart)
--- and tells the user "<label> of <pane>: <shown>".
function Connection:set_setting(pane_name, method, field, value, key, label, shown)
  self:request(method, { pane = pane_name, [field] = value }, function()
    local pane = self.panes[pane_name]
    if pane then
      pane.settings[key] = value
    end
    if pane_name == "main" then
      self.settings[key] = value
    end
    util.notify(("%s of %s: %s"):format(label, pane_name, shown))
    redraw_status()
  end, failed("setting the " .. label .. " failed"))
end

function Connection:set_effort(pane_name, effort)
  self:set_setting(pane_name, "agent/setEffort", "effort", effort, "effort", "effort", effort)
end

--- A pane's on/off setting as last set (`key`), else main's, else the option's.
function Connection:switch_state(pane_name, key, option)
  local pane = self.panes[pane_name]
  local current = pane and pane.settings[key]
  if current == nil then
    current = pane_name == "main" and self.settings[key]
    if current == nil then
      current = config.options[option] or false
    end
  end
  return current
end

function Connection:fast_mode(pane_name)
  return self:switch_state(pane_name, "fast", "fast_mode")
end

function Connection:set_fast(pane_name, enabled)
  self:set_setting(pane_name, "agent/setFastMode", "enabled", enabled, "fast", "fast mode", enabled and "on" or "off")
end

--- Whether the pane's patches wait for review (the last known value).
function Connection:review(pane_name)
  return self:switch_state(pane_name, "review", "review")
end

function Connection:set_review(pane_name, enabled)
  self:set_setting(pane_name, "agent/setReview", "enabled", enabled, "review", "review mode", enabled and "on" or "off")
end

--- Stops one running tool call (agent/cancelTool); its turn goes on.
function Connection:cancel_tool(pane_name, tool)
  self:request("agent/cancelTool", { pane = pane_name, callId = tool.call_id }, function(result)
    if result.cancelled then
      local killed = tonumber(result.killedProcesses) or 0
      util.notify(("stopped %s (%d process%s killed)"):format(tool.title, killed, killed == 1 and "" or "es"))
    else
      util.notify(("%s is not running any more"):format(tool.title))
    end
  end, failed("stopping the command failed"))
end

function Connection:new_session(pane_name)
  self:request("agent/newSession", { pane = pane_name }, function(result)
    util.notify(("new conversation in %s"):format(result.pane or pane_name))
  end, failed("could not start a new conversation"))
end

--- Shows a pane's transcript (a fork beside main); one that was wiped
--- (:bdelete, :bwipeout) is rebuilt first.
function Connection:show(pane, opts)
  opts = opts or {}
  if pane.transcript:lost() then
    self:rebuild(pane, function()
      self:show(pane, opts)
    end)
    return
  end
  if pane.name ~= "main" and self.panes.main and self.panes.main.transcript:window() then
    opts.beside = self.panes.main.transcript
  end
  return pane.transcript:show(opts)
end

--- A snapshot of the state, for statuslines and scripts.
function Connection:status()
  local panes = {}
  for _, name in ipairs(self:pane_names()) do
    local pane = self.panes[name]
    panes[name] = {
      running = pane.running and { id = pane.running.id, status = pane.running.status } or nil,
      pending = #pane.submits,
      effort = pane.settings.effort or (name == "main" and self.settings.effort) or config.options.effort,
      fast = self:fast_mode(name),
      buf = pane.transcript.buf,
    }
  end
  return {
    root = self.root,
    client_id = self.client_id,
    running = self:client() ~= nil,
    starts = self.starts,
    panes = panes,
  }
end

--- Stops every server (VimLeavePre: no "stopped unexpectedly" messages).
function M.stop_all()
  for _, conn in pairs(M.connections) do
    conn.stopping = true
  end
end

return M
