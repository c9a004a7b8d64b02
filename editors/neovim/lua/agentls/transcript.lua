-- A transcript: one markdown buffer per Pane that the agent's events stream into.
--
-- Writes are queued and applied in batches (at most every
-- `transcript.render_interval_ms`), at the end of the buffer, on a line
-- already written (a tool call's status), or under a tool call whose output
-- goes on after something else was written below it (a steer), so a fast
-- stream costs one small buffer update per batch, never a redraw of the whole
-- transcript. A line's handle is its row; every handle the transcript gave
-- out moves down when lines are inserted above it.
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local M = {}

--- @type table<integer, agentls.Transcript>
M.by_buf = {}

-- Prefixes of the lines that fold away under their one-line entry.
M.OUTPUT = "  ┃ "
M.REASONING = "  ┊ "
-- A patch's diff: folded together with its tool line (`zo` there opens it).
M.DIFF = "  │ "
M.ns = api.nvim_create_namespace("agentls.transcript")

M.icons = {
  running = "⟳",
  completed = "✓",
  failed = "✗",
  cancelled = "⏹",
  steer = "↪",
  reasoning = "…",
  retry = "⚠",
}

--- @class agentls.Transcript
--- @field buf integer
--- @field root string
--- @field pane string
local Transcript = {}
Transcript.__index = Transcript

local function unique_name(base)
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s (%d)"):format(base, n)
  end
  return name
end

local function buffer_name(root, pane, suffix)
  return ("agentls://%s/%s%s"):format(vim.fs.basename(root), pane, suffix or "")
end

--- @param root string
--- @param pane string
--- @return agentls.Transcript
function M.new(root, pane)
  local buf = api.nvim_create_buf(false, true)
  local self = setmetatable({
    buf = buf,
    root = root,
    pane = pane,
    ops = {}, -- queued writes
    count = 0, -- lines written so far, queued ones included (0: the buffer is still empty)
    applied = 0, -- lines in the buffer (0: only the initial empty line)
    tail_empty = true, -- the last line is empty
    open = nil, -- key of the block that streamed text is appended to
    blocks = {}, -- key -> block of streamed text (see Transcript:_append)
    handles = {}, -- every handle given out: moved down by insertions above them
    tools = {}, -- tool calls shown, in order
    scheduled = false,
    stats = { flushes = 0, writes = 0 },
  }, Transcript)
  M.by_buf[buf] = self
  api.nvim_buf_set_name(buf, unique_name(buffer_name(root, pane)))
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  bo.buflisted = false
  bo.undolevels = -1
  bo.filetype = "markdown"
  bo.modifiable = false
  vim.b[buf].agentls_pane = pane
  vim.b[buf].agentls_root = root
  local group = api.nvim_create_augroup("agentls.transcript." .. buf, { clear = true })
  api.nvim_create_autocmd("BufWinEnter", {
    group = group,
    buffer = buf,
    callback = function()
      M.setup_window(api.nvim_get_current_win())
    end,
  })
  api.nvim_create_autocmd("BufUnload", {
    group = group,
    buffer = buf,
    callback = function()
      -- :bdelete of a scratch buffer drops its text: it is rebuilt when shown again.
      self.wiped = true
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      M.by_buf[buf] = nil
      if self.timer then
        self.timer:stop()
        self.timer:close()
        self.timer = nil
      end
    end,
  })
  require("agentls.keymaps").transcript(buf)
  require("agentls.highlights").attach(buf, "transcript")
  M.fold_keys(buf)
  return self
end

--- zo, zc and za on a one-line entry (a tool call, the reasoning, a
--- compaction) act on the output folded under it; anywhere else they are
--- Neovim's own.
function M.fold_keys(buf)
  for _, key in ipairs({ "zo", "zc", "za" }) do
    vim.keymap.set("n", key, function()
      local lnum, col = vim.fn.line("."), vim.fn.col(".")
      if vim.fn.foldlevel(lnum) > 0 or vim.fn.foldlevel(lnum + 1) == 0 then
        vim.cmd("normal! " .. vim.v.count1 .. key)
        return
      end
      local below = lnum + 1
      local closed = vim.fn.foldclosed(below) ~= -1
      if key == "zo" or (key == "za" and closed) then
        vim.cmd(below .. "foldopen")
      else
        vim.cmd(below .. "foldclose")
      end
      vim.fn.cursor(lnum, col)
    end, { buffer = buf, desc = "Agent: open/close the output under this entry" })
  end
end

--- Window options for a window that shows a transcript.
function M.setup_window(win)
  local t = M.by_buf[api.nvim_win_get_buf(win)]
  if not t then
    return
  end
  local function set(name, value)
    api.nvim_set_option_value(name, value, { scope = "local", win = win })
  end
  set("wrap", true)
  set("linebreak", true)
  set("number", false)
  set("relativenumber", false)
  set("signcolumn", "no")
  set("list", false)
  set("spell", false)
  if config.options.transcript.fold_output then
    set("foldmethod", "expr")
    set("foldexpr", "v:lua.require'agentls.transcript'.foldexpr()")
    set("foldtext", "v:lua.require'agentls.transcript'.foldtext()")
    set("foldlevel", 0)
    set("foldenable", true)
  end
end

-- Tool output and reasoning lines fold; the one-line entry above them does
-- not, so updating its status never disturbs the fold (Neovim recomputes
-- expression folds unreliably when a fold's first line is replaced).
function M.foldexpr()
  local lnum = vim.v.lnum
  local line = api.nvim_buf_get_lines(0, lnum - 1, lnum, false)[1] or ""
  if line:sub(1, #M.OUTPUT) == M.OUTPUT or line:sub(1, #M.REASONING) == M.REASONING then
    return "1"
  end
  if line:sub(1, #M.DIFF) == M.DIFF then
    return "1"
  end
  -- A diff is written once its tool line is final: the line can start the fold.
  local next_line = api.nvim_buf_get_lines(0, lnum, lnum + 1, false)[1] or ""
  if next_line:sub(1, #M.DIFF) == M.DIFF then
    return ">1"
  end
  return "0"
end

function M.foldtext()
  local first = api.nvim_buf_get_lines(0, vim.v.foldstart - 1, vim.v.foldstart, false)[1] or ""
  local hidden = vim.v.foldend - vim.v.foldstart
  return ("%s  ⋯ %d more line%s"):format(first, hidden, hidden == 1 and "" or "s")
end

-- --- queued writes -------------------------------------------------------------------

function Transcript:_schedule()
  if self.scheduled then
    return
  end
  self.scheduled = true
  if not self.timer then
    self.timer = assert(vim.uv.new_timer())
  end
  self.timer:start(
    config.options.transcript.render_interval_ms,
    0,
    vim.schedule_wrap(function()
      self:flush()
    end)
  )
end

function Transcript:_push(op)
  self.ops[#self.ops + 1] = op
  self:_schedule()
end

function Transcript:_push_lines(lines)
  local last = self.ops[#self.ops]
  if last and last[1] == "lines" then
    vim.list_extend(last[2], lines)
  else
    self:_push({ "lines", vim.list_slice(lines) })
  end
  self.count = self.count + #lines
  self.tail_empty = lines[#lines] == ""
end

--- A handle on row `row`, kept in place when lines are inserted above it.
function Transcript:_handle(row)
  local handle = { row = row }
  self.handles[#self.handles + 1] = handle
  return handle
end

--- `n` lines were inserted after row `row`: what was below moves down.
function Transcript:_shift(row, n)
  for _, handle in ipairs(self.handles) do
    if handle.row > row then
      handle.row = handle.row + n
    end
  end
  self.count = self.count + n
end

--- Ends the block that streamed text goes to. A tool's output block stays
--- resumable (more output goes under its tool wherever that is); any other
--- block is over, and a newline it held back is dropped.
function Transcript:_close_block()
  local block = self.open and self.blocks[self.open]
  if block and not block.resumable then
    self.blocks[self.open] = nil
  end
  self.open = nil
end

--- Text streamed from now on starts a new block (a new paragraph).
function Transcript:end_block()
  self:_close_block()
end

--- Appends whole lines.
--- @param lines string[]
--- @param opts? {blank_before?: boolean}
--- @return {row: integer} handle of the first line (for set_line)
function Transcript:lines(lines, opts)
  opts = opts or {}
  self:_close_block()
  if opts.blank_before and self.count > 0 and not self.tail_empty then
    self:_push_lines({ "" })
  end
  local handle = self:_handle(self.count)
  self:_push_lines(lines)
  return handle
end

--- Highlights a line written earlier (or queued) with `group`.
function Transcript:highlight(row, group)
  self:_push({ "hl", row, group })
end

--- Replaces a line written earlier.
function Transcript:set_line(handle, text)
  self:_push({ "set", handle.row, text })
  if handle.row == self.count - 1 then
    self.tail_empty = text == ""
  end
end

--- Appends text to a block: at the end of its last line (`block.tail`), which
--- is the end of the buffer unless something was written after the block
--- (then the text is inserted there, and what follows moves down). Every line
--- of the block starts with `block.prefix`; a block not `started` yet begins
--- on a new line under its tail. A trailing newline is held back until more
--- text comes: a block never ends with an empty (or prefix-only) line that
--- would have to be removed.
function Transcript:_append(block, text)
  text = text:gsub("\r\n?", "\n")
  if block.held_newline then
    text = "\n" .. text
  end
  block.held_newline = text:sub(-1) == "\n"
  if block.held_newline then
    text = text:sub(1, -2)
  end
  if text == "" then
    return
  end
  local prefix = block.prefix
  if prefix ~= "" then
    text = text:gsub("\n", "\n" .. prefix)
  end
  if not block.started then
    block.started = true
    text = "\n" .. prefix .. text
  end
  local row = block.tail.row
  local at_end = row == self.count - 1
  local last = self.ops[#self.ops]
  if last and last[1] == "text" and last[4] == block then
    local parts = last[3]
    parts[#parts + 1] = text
  else
    self:_push({ "text", row, { text }, block })
  end
  local _, newlines = text:gsub("\n", "")
  if newlines > 0 then
    self:_shift(row, newlines)
    block.tail.row = row + newlines
  end
  if at_end then
    local tail = text:match("[^\n]*$")
    if newlines > 0 then
      self.tail_empty = tail == ""
    else
      self.tail_empty = self.tail_empty and tail == ""
    end
  end
end

--- Appends streamed text to the block `key` at the end of the buffer,
--- starting it (on a line of its own) if it is not the open one. Every line
--- of the block starts with `prefix`.
--- @param opts? {blank_before?: boolean, header?: string}
function Transcript:stream(key, text, prefix, opts)
  if text == nil or text == "" then
    return
  end
  opts = opts or {}
  prefix = prefix or ""
  local block = self.blocks[key]
  if self.open ~= key or not block then
    if opts.header then
      self:lines({ opts.header }, { blank_before = opts.blank_before })
    else
      self:_close_block()
      if opts.blank_before and self.count > 0 and not self.tail_empty then
        self:_push_lines({ "" })
      end
    end
    self:_push_lines({ prefix })
    block = { prefix = prefix, started = true, tail = self:_handle(self.count - 1) }
    self.blocks[key] = block
    self.open = key
  end
  self:_append(block, text)
end

--- Whether the buffer lost its text (wiped with :bdelete or :bwipeout).
function Transcript:lost()
  return self.wiped or not api.nvim_buf_is_valid(self.buf) or not api.nvim_buf_is_loaded(self.buf)
end

--- Applies every queued write now.
function Transcript:flush()
  self.scheduled = false
  local ops = self.ops
  if #ops == 0 then
    return
  end
  self.ops = {}
  local buf = self.buf
  if self:lost() then
    return -- rebuilt from the server's history when shown again
  end
  local follow = {}
  local before = api.nvim_buf_line_count(buf)
  if config.options.transcript.follow then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if api.nvim_win_get_cursor(win)[1] >= before then
        follow[#follow + 1] = win
      end
    end
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(function()
    for _, op in ipairs(ops) do
      local kind = op[1]
      if kind == "lines" then
        if self.applied == 0 then
          api.nvim_buf_set_lines(buf, 0, -1, false, op[2])
        else
          api.nvim_buf_set_lines(buf, -1, -1, false, op[2])
        end
        self.applied = self.applied + #op[2]
      elseif kind == "text" then
        local parts = vim.split(table.concat(op[3]), "\n", { plain = true })
        local row = op[2]
        local col = #api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
        api.nvim_buf_set_text(buf, row, col, row, col, parts)
        self.applied = self.applied + #parts - 1
      elseif kind == "set" then
        api.nvim_buf_set_lines(buf, op[2], op[2] + 1, false, { op[3] })
      elseif kind == "hl" then
        api.nvim_buf_set_extmark(buf, M.ns, op[2], 0, { line_hl_group = op[3] })
      end
    end
  end)
  vim.bo[buf].modifiable = false
  self.stats.flushes = self.stats.flushes + 1
  self.stats.writes = self.stats.writes + #ops
  if not ok then
    util.error("could not update the transcript: " .. tostring(err))
    return
  end
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    pcall(api.nvim_win_set_cursor, win, { last, 0 })
  end
end

--- The whole text (queued writes applied first).
function Transcript:text()
  self:flush()
  return table.concat(api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

function Transcript:rename(pane, closed)
  self.pane = pane
  vim.b[self.buf].agentls_pane = pane
  local name = unique_name(buffer_name(self.root, pane, closed and " (closed)" or ""))
  -- Renaming makes Neovim keep an unlisted buffer with the old name (like
  -- :file does): wipe it, it is nobody's.
  local old = api.nvim_buf_get_name(self.buf)
  api.nvim_buf_set_name(self.buf, name)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if buf ~= self.buf and api.nvim_buf_get_name(buf) == old and not api.nvim_buf_is_loaded(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

-- --- windows -------------------------------------------------------------------------

--- The window showing this transcript in the current tab page, if any.
function Transcript:window()
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == self.buf then
      return win
    end
  end
end

local function size_of(total)
  local size = config.options.transcript.size
  if size < 1 then
    return math.max(20, math.floor(total * size))
  end
  return math.floor(size)
end

--- Shows the transcript (if it is not visible yet) and returns its window.
--- @param opts? {beside?: agentls.Transcript, focus?: boolean}
function Transcript:show(opts)
  opts = opts or {}
  local focus = opts.focus
  if focus == nil then
    focus = config.options.transcript.focus
  end
  local win = self:window()
  if not win then
    local tc = config.options.transcript
    local beside = opts.beside and opts.beside:window()
    local cfg
    if beside then
      cfg = { split = tc.fork == "vertical" and "right" or "below", win = beside }
    else
      local split = ({ right = "right", left = "left", top = "above", bottom = "below" })[tc.position]
      cfg = { split = split, win = -1 }
      if split == "right" or split == "left" then
        cfg.width = size_of(vim.o.columns)
      else
        cfg.height = size_of(vim.o.lines)
      end
    end
    self:flush()
    win = api.nvim_open_win(self.buf, false, cfg)
    M.setup_window(win)
    pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(self.buf), 0 })
  end
  if focus then
    api.nvim_set_current_win(win)
  end
  return win
end

--- Closes every window showing the transcript (never the last window).
function Transcript:hide()
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, false)
    end
  end
end

function Transcript:toggle()
  if self:window() then
    self:hide()
  else
    self:show({ focus = true })
  end
end

-- --- what a turn looks like ---------------------------------------------------------------

--- The number users see for a turn: its number in the pane's session
--- (turn.started `number`), else its server-wide id.
--- @param turn agentls.Turn
--- @return integer
function M.number(turn)
  return turn.number or turn.id
end

local function quote(text)
  local out = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    out[#out + 1] = line == "" and ">" or "> " .. line
  end
  return out
end

--- @param turn agentls.Turn
function Transcript:turn_started(turn)
  local lines = { ("### You · turn %d"):format(M.number(turn)) }
  -- A prompt we did not send ourselves (a rebuilt transcript) carries its
  -- attachments in full: show what was typed, and what was attached.
  local typed, attached = require("agentls.attachments").split(turn.prompt)
  vim.list_extend(lines, quote(typed))
  local display = turn.display or (#attached > 0 and ("attached: " .. table.concat(attached, " · ")) or nil)
  if display then
    lines[#lines + 1] = ">"
    lines[#lines + 1] = "> _" .. display .. "_"
  end
  self:lines(lines, { blank_before = true })
  self.last_was_tool = false
end

function Transcript:answer(turn, text)
  self.last_was_tool = false
  self:stream("answer:" .. turn.id, text, "", { blank_before = true })
end

function Transcript:reasoning(turn, text)
  self.last_was_tool = false
  self:stream("reasoning:" .. turn.id, text, M.REASONING, {
    blank_before = true,
    header = ("- %s reasoning"):format(M.icons.reasoning),
  })
end

local function tool_line(tool, status)
  local icon, suffix = M.icons.running, " · running"
  if status then
    local exit = tool.exit_code and (" · exit " .. tool.exit_code) or ""
    if status == "completed" then
      icon, suffix = M.icons.completed, exit
    elseif status == "cancelled" then
      icon, suffix = M.icons.cancelled, " · cancelled"
    else
      icon, suffix = M.icons.failed, " · " .. status .. exit
    end
  end
  return ("- %s %s%s"):format(icon, util.shorten(tool.title, 100), suffix)
end

function Transcript:tool_started(tool)
  local after_tool = self.last_was_tool
  tool.handle = self:lines({ tool_line(tool) }, { blank_before = not after_tool })
  -- Its output goes under its line, even when something was written below
  -- it in the meantime (a steer, another tool call).
  tool.block = { prefix = M.OUTPUT, resumable = true, tail = self:_handle(tool.handle.row) }
  self.blocks["output:" .. tool.call_id] = tool.block
  self.tools[#self.tools + 1] = tool
  self.last_was_tool = true
end

--- The tool call whose line (or folded output) is at `row` (0-based), if any.
function Transcript:tool_at(row)
  self:flush()
  while row > 0 do
    local line = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1] or ""
    if line:sub(1, #M.OUTPUT) ~= M.OUTPUT then
      break
    end
    row = row - 1
  end
  for i = #self.tools, 1, -1 do
    local tool = self.tools[i]
    if tool.handle.row == row then
      return tool
    end
  end
end

function Transcript:tool_output(tool, text)
  if text == nil or text == "" then
    return
  end
  local key = "output:" .. tool.call_id
  local block = tool.block or self.blocks[key]
  if not block then
    return
  end
  if self.open ~= key then
    self:_close_block()
    self.open = key
  end
  self:_append(block, text)
end

function Transcript:tool_finished(tool, status)
  self:_close_block()
  self.blocks["output:" .. tool.call_id] = nil
  if tool.handle then
    self:set_line(tool.handle, tool_line(tool, status))
  end
end

local function steer_line(text, state)
  local typed, attached = require("agentls.attachments").split(text)
  local words = vim.tbl_map(function(line)
    return line:match("^(%S+)")
  end, attached)
  local with = #words > 0 and (" · attached " .. table.concat(words, ", ")) or ""
  return ("> %s **Steer**: %s%s · %s"):format(M.icons.steer, util.shorten(typed, 160), with, state)
end

function Transcript:steer_admitted(steer)
  steer.handle = self:lines({ steer_line(steer.text, "waiting for the model") }, { blank_before = true })
  self.last_was_tool = false
end

function Transcript:steer_applied(steer)
  if steer.handle then
    self:set_line(steer.handle, steer_line(steer.text, "sent to the model"))
  else
    self:lines({ steer_line(steer.text, "sent to the model") }, { blank_before = true })
  end
end

local entry_icons = { completed = M.icons.completed, cancelled = M.icons.cancelled, interrupted = M.icons.retry }

local function split(text)
  return vim.split((text or ""):gsub("\r\n?", "\n"), "\n", { plain = true })
end

--- A conversation the pane did not see happen (a resumed session, what a fork
--- inherited), from its displayable entries.
function Transcript:entries(title, entries)
  if #entries == 0 then
    return
  end
  local lines = { "## " .. title }
  for _, entry in ipairs(entries) do
    local role, text = entry.role, util.nn(entry.text) or ""
    if role == "user" then
      vim.list_extend(lines, { "", "**You**" })
      local typed, attached = require("agentls.attachments").split(text)
      vim.list_extend(lines, quote(typed))
      if #attached > 0 then
        vim.list_extend(lines, { ">", "> _attached: " .. table.concat(attached, " · ") .. "_" })
      end
    elseif role == "assistant" then
      lines[#lines + 1] = ""
      vim.list_extend(lines, split(text))
    elseif role == "summary" then
      vim.list_extend(lines, { "", "**Summary of earlier turns**" })
      vim.list_extend(lines, split(text))
    elseif role == "tool" then
      local status = util.nn(entry.status) or "completed"
      local icon = entry_icons[status] or M.icons.failed
      local suffix = status == "completed" and "" or (" · " .. status)
      lines[#lines + 1] = ("- %s %s%s"):format(icon, util.shorten(text, 100), suffix)
    elseif role == "steer" then
      lines[#lines + 1] = steer_line(text, "sent")
    end
  end
  self:lines(lines, { blank_before = true })
  self.last_was_tool = false
end

function Transcript:note(text)
  self:lines({ "_" .. text .. "_" }, { blank_before = true })
  self.last_was_tool = false
end

function Transcript:divider(text)
  self:lines({ "---", "", "_" .. text .. "_" }, { blank_before = true })
  self.last_was_tool = false
end

local failures = {
  rate_limit = "rate limited",
  server = "server error",
  connection = "connection failed",
  timeout = "timed out",
  stream = "stream broken",
}

local function now_ms()
  local sec, usec = vim.uv.gettimeofday()
  return sec * 1000 + math.floor(usec / 1000)
end

local function retry_line(retry)
  local state
  if retry.done then
    state = "retried"
  else
    local left = math.ceil((retry.at - now_ms()) / 1000)
    state = left > 0 and ("retrying in %d s"):format(left) or "retrying now"
  end
  return ("> %s model unavailable (%s): %s · attempt %d of %d"):format(
    M.icons.retry,
    retry.why,
    state,
    retry.attempt,
    retry.max
  )
end

--- One line per turn for the model's retries: it counts down to the next
--- attempt and is rewritten by each later retry of the same turn.
function Transcript:model_retry(turn, ev)
  local retry = turn.retry or {}
  turn.retry = retry
  local reason = util.shorten(tostring(util.nn(ev.reason) or ""), 80)
  retry.why = reason ~= "" and reason or failures[util.nn(ev.failure)] or "error"
  retry.attempt = (tonumber(util.nn(ev.attempt)) or 0) + 1
  retry.max = tonumber(util.nn(ev.maxAttempts)) or 0
  retry.at = tonumber(util.nn(ev.retryAt)) or (now_ms() + (tonumber(util.nn(ev.delayMs)) or 0))
  retry.done = false
  if retry.handle then
    self:set_line(retry.handle, retry_line(retry))
  else
    retry.handle = self:lines({ retry_line(retry) }, { blank_before = true })
    self.last_was_tool = false
  end
  if not retry.timer then
    retry.timer = assert(vim.uv.new_timer())
    retry.timer:start(
      1000,
      1000,
      vim.schedule_wrap(function()
        if not retry.timer then
          return
        end
        self:set_line(retry.handle, retry_line(retry))
        if retry.at <= now_ms() then
          self:retry_over(turn, false)
        end
      end)
    )
  end
end

--- Stops the countdown of a turn's retry line (`done`: the turn is over).
function Transcript:retry_over(turn, done)
  local retry = turn.retry
  if not retry then
    return
  end
  if retry.timer then
    retry.timer:stop()
    retry.timer:close()
    retry.timer = nil
  end
  if done then
    retry.done = true
    self:set_line(retry.handle, retry_line(retry))
  end
end

function Transcript:plan(ev)
  local lines = { "**Plan**" }
  local explanation = util.nn(ev.explanation)
  if explanation and explanation ~= "" then
    lines[1] = "**Plan** — " .. util.shorten(explanation, 160)
  end
  local marks = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }
  for _, step in ipairs(util.nn(ev.plan) or {}) do
    lines[#lines + 1] = ("- %s %s"):format(marks[step.status] or "[ ]", util.shorten(step.step or "", 160))
  end
  self:lines(lines, { blank_before = true })
  self.last_was_tool = false
end

function Transcript:cancel_requested(turn)
  self:lines(
    { ("_%s cancel requested for turn %d…_"):format(M.icons.cancelled, M.number(turn)) },
    { blank_before = true }
  )
  self.last_was_tool = false
end

--- One line describing a cancellation Receipt.
function M.receipt_text(receipt)
  local aborted = {}
  for _, call in ipairs(util.nn(receipt.abortedToolCalls) or {}) do
    aborted[#aborted + 1] = ("`%s` (%s)"):format(call.tool, call.callId)
  end
  local killed = tonumber(receipt.killedProcesses) or 0
  local surviving = tonumber(receipt.survivingProcesses) or 0
  if #aborted == 0 and killed == 0 and surviving == 0 then
    return "Receipt: no tool call was running, no process to kill"
  end
  return ("Receipt: aborted %s · killed %d process%s · %d still running"):format(
    #aborted > 0 and table.concat(aborted, ", ") or "no tool call",
    killed,
    killed == 1 and "" or "es",
    surviving
  )
end

local function usage_text(usage)
  usage = util.nn(usage)
  if type(usage) ~= "table" or not usage.inputTokens or (usage.inputTokens == 0 and (usage.outputTokens or 0) == 0) then
    return ""
  end
  local text = (" · %d tokens in, %d out"):format(usage.inputTokens, usage.outputTokens or 0)
  local meter = require("agentls.context").reading(usage)
  if meter then
    text = text .. " · context " .. require("agentls.context").describe(meter)
  end
  return text
end

--- @param result table the TurnResult fields (of a turn.finished event or a response)
function Transcript:turn_finished(turn, result)
  self:retry_over(turn, true)
  local status = result.status
  local lines
  if status == "completed" then
    lines = { ("**%s Completed**%s"):format(M.icons.completed, usage_text(result.usage)) }
  elseif status == "cancelled" then
    lines = { ("**%s Cancelled**%s"):format(M.icons.cancelled, usage_text(result.usage)) }
    local receipt = util.nn(result.receipt)
    if type(receipt) == "table" then
      lines[#lines + 1] = ""
      lines[#lines + 1] = M.receipt_text(receipt)
    end
  elseif status == "lost" then
    lines = { ("**%s Lost**: the server stopped before the turn finished"):format(M.icons.failed) }
  else
    local err = util.nn(result.error) or "unknown error"
    lines = { ("**%s Failed**: %s"):format(M.icons.failed, util.shorten(tostring(err), 300)) }
  end
  self:lines(lines, { blank_before = true })
  self.last_was_tool = false
end

return M
