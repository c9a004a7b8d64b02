-- The compose buffer: a small markdown buffer for writing a prompt (or a
-- steer) of any length. `:AgentAsk` / `:AgentSteer` without an argument (and
-- their keymaps) open it under the pane's transcript. In Normal mode <CR> or
-- <C-s> sends it (<C-s> in Insert mode too), `q` cancels. `#buffer`,
-- `#file:PATH`, `#selection` and `#diagnostics` attach context
-- (agentls.attachments): typing `#` offers them, and each shows what it
-- refers to at the end of its line. A compose window closed any other way
-- (:q) keeps its text as a draft for the next one.
local attachments = require("agentls.attachments")
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local M = {}

--- Open compose buffers: bufnr -> state.
--- @type table<integer, table>
M.by_buf = {}

-- Unsent text of compose windows closed without `q` or sending, by pane and kind.
local drafts = {}

local hint_ns = api.nvim_create_namespace("agentls.compose")

local function draft_key(state)
  return state.conn.root .. "\0" .. state.pane .. "\0" .. state.kind
end

--- The prompt as typed: the buffer's lines, without blank lines around them.
--- @return string
function M.text(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  while #lines > 0 and not lines[1]:match("%S") do
    table.remove(lines, 1)
  end
  while #lines > 0 and not lines[#lines]:match("%S") do
    table.remove(lines)
  end
  return table.concat(lines, "\n")
end

--- Beside each attachment word: what it refers to (or why it cannot be attached).
local function show_hints(state)
  local buf = state.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  api.nvim_buf_clear_namespace(buf, hint_ns, 0, -1)
  for row, line in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local chunks = {}
    for _, token in ipairs(attachments.tokens(line)) do
      local what, err = attachments.describe(token, state.origin)
      if token.name == "selection" and state.origin.selection_in_context then
        what, err = "sent as the selection", nil
      end
      chunks[#chunks + 1] = { " → " .. (what or err), what and "AgentlsHint" or "AgentlsAttachmentError" }
    end
    if #chunks > 0 then
      api.nvim_buf_set_extmark(buf, hint_ns, row - 1, 0, { virt_text = chunks, hl_mode = "combine" })
    end
  end
end

local function winbar(state, width)
  local keys = "  <CR>/<C-s> send · q cancel · # attach"
  local title = state.kind == "steer" and ("Steer %s"):format(state.pane) or ("Ask %s"):format(state.pane)
  local about = state.display and (" · " .. state.display) or ""
  local draft = state.draft and " · draft restored" or ""
  -- A narrow window drops the key hints rather than cut what the prompt is for.
  if vim.fn.strdisplaywidth(" " .. title .. about .. draft .. keys) > width then
    keys = ""
  end
  return ("%%#Title# %s%%*%s%s%%#AgentlsHint#%s"):format(title, about:gsub("%%", "%%%%"), draft, keys)
end

local function close(state)
  state.closing = true
  if api.nvim_buf_is_valid(state.buf) then
    pcall(api.nvim_buf_delete, state.buf, { force = true })
  end
  if state.origin_win and api.nvim_win_is_valid(state.origin_win) then
    api.nvim_set_current_win(state.origin_win)
  end
end

--- Sends the compose buffer's text (and closes it), or says why not.
function M.send(buf)
  local state = M.by_buf[buf]
  if not state then
    return
  end
  local text = M.text(buf)
  if text == "" then
    util.notify("nothing to send: write a prompt first (q cancels)")
    return
  end
  local prompt, attached, errors = attachments.expand(text, state.origin)
  if errors then
    util.error("cannot attach " .. table.concat(errors, "; "))
    return
  end
  vim.cmd("stopinsert")
  state.sent = true
  close(state)
  state.on_send(text, prompt, attached)
end

--- Closes the compose buffer without sending (its text is dropped).
function M.cancel(buf)
  local state = M.by_buf[buf]
  if not state then
    return
  end
  state.cancelled = true
  vim.cmd("stopinsert")
  close(state)
end

local function set_keys(buf)
  local function map(modes, lhs, fn, desc)
    vim.keymap.set(modes, lhs, function()
      fn(buf)
    end, { buffer = buf, desc = desc, nowait = true })
  end
  map("n", "<CR>", M.send, "Agent: send this prompt")
  map({ "n", "i" }, "<C-s>", M.send, "Agent: send this prompt")
  map("n", "q", M.cancel, "Agent: cancel (close without sending)")
  if vim.fn.has("nvim-0.11") ~= 1 then
    return -- 'completeopt' is global before 0.11: <C-x><C-o> by hand there
  end
  -- `#` at the start of a word offers the attachments.
  vim.keymap.set("i", "#", function()
    local col = api.nvim_win_get_cursor(0)[2]
    local before = api.nvim_get_current_line():sub(col, col)
    if col == 0 or before:match("[%s%(%[{\"']") then
      return "#<C-x><C-o>"
    end
    return "#"
  end, { buffer = buf, expr = true, desc = "Agent: attach (#buffer, #file:, #selection, #diagnostics)" })
end

--- Opens a compose buffer.
--- @param opts {kind: "ask"|"steer", conn: agentls.Connection, pane: string, origin: table, context?: table, display?: string, on_send: fun(text: string, prompt: string, attached: string|nil)}
--- @return integer buf
function M.open(opts)
  for buf, state in pairs(M.by_buf) do
    if state.conn == opts.conn and state.pane == opts.pane and state.kind == opts.kind and state.win then
      if api.nvim_win_is_valid(state.win) then
        api.nvim_set_current_win(state.win)
        return buf
      end
    end
  end
  local state = vim.tbl_extend("force", {}, opts)
  state.origin_win = api.nvim_get_current_win()
  local buf = api.nvim_create_buf(false, true)
  state.buf = buf
  M.by_buf[buf] = state
  local base = ("agentls://%s/%s/%s"):format(vim.fs.basename(opts.conn.root), opts.pane, opts.kind)
  local name, n = base, 1
  while vim.fn.bufexists(name) == 1 do
    n = n + 1
    name = ("%s (%d)"):format(base, n)
  end
  api.nvim_buf_set_name(buf, name)
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "wipe"
  bo.swapfile = false
  bo.filetype = "markdown"
  bo.omnifunc = "v:lua.require'agentls.attachments'.omnifunc"
  vim.b[buf].agentls_root = opts.conn.root
  vim.b[buf].agentls_pane = opts.pane
  local draft = drafts[draft_key(state)]
  if draft then
    drafts[draft_key(state)] = nil
    state.draft = true
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(draft, "\n", { plain = true }))
  end
  require("agentls.highlights").attach(buf, "compose")
  set_keys(buf)

  -- Under the pane's transcript when it is on screen, else along the bottom.
  local height = config.options.compose.height
  local pane = opts.conn.panes[opts.pane]
  local above = pane and pane.transcript:window()
  local cfg = above and { split = "below", win = above, height = height }
    or { split = "below", win = -1, height = height }
  local win = api.nvim_open_win(buf, true, cfg)
  state.win = win
  local wo = vim.wo[win]
  wo.winbar = winbar(state, api.nvim_win_get_width(win))
  wo.winfixheight = true
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.spell = false
  if vim.fn.has("nvim-0.11") == 1 then
    -- Offer, do not insert: the first match must not replace what you type.
    vim.bo[buf].completeopt = "menuone,noselect,popup" -- global-local since 0.11
  end

  local group = api.nvim_create_augroup("agentls.compose." .. buf, { clear = true })
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "InsertLeave" }, {
    group = group,
    buffer = buf,
    callback = function()
      show_hints(state)
    end,
  })
  api.nvim_create_autocmd("CompleteDone", {
    group = group,
    buffer = buf,
    callback = function()
      -- After `#file:` or a directory, go on with the names inside it.
      local word = (vim.v.completed_item or {}).word or ""
      if word == "#file:" or (word:match("^#file:") and word:sub(-1) == "/") then
        api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "n", false)
      end
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      if not state.sent and not state.cancelled then
        local text = M.text(buf)
        if text ~= "" then
          drafts[draft_key(state)] = text
          util.notify(
            ("compose window closed: its text is kept for the next :Agent%s"):format(
              state.kind == "steer" and "Steer" or "Ask"
            )
          )
        end
      end
      M.by_buf[buf] = nil
    end,
  })
  show_hints(state)
  if not state.draft then
    vim.cmd("startinsert")
  end
  return buf
end

return M
