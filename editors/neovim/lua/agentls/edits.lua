-- Edits through the editor: the buffer is the truth.
--
-- The server is attached to every file buffer of its workspace (whatever
-- its filetype), so it reads what you see, unsaved changes included. The
-- agent's patches arrive as one workspace/applyEdit, applied by Neovim's own
-- vim.lsp.util.apply_workspace_edit (so `u` undoes them) after every
-- document's version was checked — a buffer you changed since the agent read
-- it refuses the whole edit, and the agent is told to read it again. Then
-- each buffer the edit changed is written (`edits.save`), so commands see the
-- change on disk and BufWritePre formatters run — except a buffer you had
-- modified: the agent's change is merged into it and it stays modified, for
-- you to save. Files a command changed on disk are reloaded (`:checktime`)
-- unless they have unsaved changes, and the plugin says so.
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local nn = util.nn
local M = {}

--- What the plugin adds to Neovim's client capabilities: Neovim applies
--- documentChanges (versioned edits, create/rename/delete) but does not
--- advertise them; and we answer agent/diagnostics.
M.client_capabilities = {
  workspace = { workspaceEdit = { documentChanges = true } },
  experimental = { agentls = { diagnostics = true } },
}

-- --- attaching to every file buffer of the workspace -------------------------------------

local function is_file_buffer(buf)
  return api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and api.nvim_buf_get_name(buf) ~= ""
end

local function inside(root, buf)
  local name = vim.fs.normalize(vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ":p"))
  return name:sub(1, #root + 1) == root .. "/"
end

--- Attaches the connection's client to `buf` if it is a file of its workspace.
function M.attach(conn, client, buf)
  if is_file_buffer(buf) and inside(conn.root, buf) and not vim.lsp.buf_is_attached(buf, client.id) then
    vim.lsp.buf_attach_client(buf, client.id)
  end
end

--- Attaches the client to every file buffer of the workspace open now.
function M.attach_all(conn, client)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    M.attach(conn, client, buf)
  end
end

--- From now on, every file opened in a workspace with a running server is
--- attached; the server's code actions run `agentls.ask` here.
function M.setup()
  vim.lsp.commands["agentls.ask"] = M.ask_command
  local group = api.nvim_create_augroup("agentls.edits", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    callback = function(ev)
      local connection = require("agentls.connection")
      for _, conn in pairs(connection.connections) do
        local client = conn:client()
        if client and client.initialized then
          M.attach(conn, client, ev.buf)
        end
      end
    end,
  })
end

-- --- workspace/applyEdit --------------------------------------------------------------------

local function buffer_of(uri)
  local buf = vim.fn.bufnr(vim.uri_to_fname(uri))
  return buf ~= -1 and buf or nil
end

--- The URIs of the documents an edit changes the text of.
local function edited_uris(edit)
  local uris, seen = {}, {}
  for _, change in ipairs(nn(edit.documentChanges) or {}) do
    local doc = nn(change.textDocument)
    if doc and not seen[doc.uri] then
      seen[doc.uri] = true
      uris[#uris + 1] = doc.uri
    end
  end
  for uri in pairs(nn(edit.changes) or {}) do
    if not seen[uri] then
      seen[uri] = true
      uris[#uris + 1] = uri
    end
  end
  return uris
end

--- Why the edit cannot be applied (a document changed since the server read
--- it), or nil. Neovim checks only the first document, and only prints.
local function stale(edit)
  for _, change in ipairs(nn(edit.documentChanges) or {}) do
    local doc = nn(change.textDocument)
    local version = doc and nn(doc.version)
    if version then
      local buf = buffer_of(doc.uri)
      local current = buf and api.nvim_buf_is_loaded(buf) and vim.lsp.util.buf_versions[buf] or nil
      if current ~= version then
        return ("%s changed in the editor (version %s, the edit is for %s)"):format(
          vim.fn.fnamemodify(vim.uri_to_fname(doc.uri), ":~:."),
          tostring(current),
          tostring(version)
        )
      end
    end
  end
end

--- Writes `buf` (its autocommands run: formatters on save), quietly.
local function write(buf)
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("silent keepalt write")
  end)
  if not ok then
    util.warn(("could not save %s after the agent's edit: %s"):format(api.nvim_buf_get_name(buf), err))
  end
end

--- The handler of workspace/applyEdit.
function M.apply_edit(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client or type(params) ~= "table" or type(params.edit) ~= "table" then
    return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams)
  end
  local edit = params.edit
  local why = stale(edit)
  if why then
    return { applied = false, failureReason = why }
  end
  -- How each buffer was before: what the user modified is never saved for them.
  local before = {}
  for _, uri in ipairs(edited_uris(edit)) do
    local buf = buffer_of(uri)
    local loaded = buf ~= nil and api.nvim_buf_is_loaded(buf)
    local empty
    if loaded then
      empty = api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
    else
      local stat = vim.uv.fs_stat(vim.uri_to_fname(uri))
      empty = stat == nil or stat.size == 0
    end
    before[uri] = {
      modified = loaded and vim.bo[buf].modified,
      listed = buf ~= nil and vim.bo[buf].buflisted,
      empty = empty,
    }
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, client.offset_encoding)
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  for uri, was in pairs(before) do
    local buf = buffer_of(uri)
    if buf and api.nvim_buf_is_loaded(buf) then
      local count = api.nvim_buf_line_count(buf)
      if was.empty and count > 1 and api.nvim_buf_get_lines(buf, count - 1, count, false)[1] == "" then
        -- Text inserted into an empty buffer ends with the file's final newline,
        -- which Neovim keeps as 'eol', not as a line (as it does for edits past the end).
        api.nvim_buf_set_lines(buf, count - 1, count, false, {})
      end
      if config.options.edits.save and not was.modified and vim.bo[buf].modified then
        write(buf)
      end
      if not was.listed then
        -- Opened only to be edited: it stays out of the buffer list, as before.
        vim.bo[buf].buflisted = false
      end
    end
  end
  return { applied = true }
end

-- --- files changed on disk by a command ------------------------------------------------------

local function now()
  local t = vim.uv.clock_gettime("realtime")
  return t.sec * 1e9 + t.nsec
end

--- Reloads the unmodified buffers of the workspace whose files changed on
--- disk (Vim's own check: `:checktime`), and says which. One with unsaved
--- changes is left alone, and named, if its file changed since `since`.
function M.reload(conn, since)
  if not config.options.edits.reload then
    return
  end
  local reloaded, kept = {}, {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if is_file_buffer(buf) and inside(conn.root, buf) then
      local name = util.relative(vim.fs.normalize(api.nvim_buf_get_name(buf)), conn.root)
      if vim.bo[buf].modified then
        local stat = vim.uv.fs_stat(api.nvim_buf_get_name(buf))
        if since and stat and stat.mtime.sec * 1e9 + stat.mtime.nsec >= since then
          kept[#kept + 1] = name
        end
      else
        local tick = vim.b[buf].changedtick
        api.nvim_buf_call(buf, function()
          vim.cmd("setlocal autoread | silent! checktime " .. buf .. " | setlocal autoread<")
        end)
        if vim.b[buf].changedtick ~= tick then
          reloaded[#reloaded + 1] = name
        end
      end
    end
  end
  if #reloaded > 0 then
    util.notify(("reloaded %s (changed on disk by a command)"):format(table.concat(reloaded, ", ")))
  end
  if #kept > 0 then
    util.warn(
      ("%s changed on disk, but you have unsaved changes in it: kept yours (`:e!` takes the disk's)"):format(
        table.concat(kept, ", ")
      )
    )
  end
end

--- A tool call started / finished (agent/event): what edits need of it.
function M.tool_started(conn, pane)
  if not pane.replaying then
    conn.tool_started_at = now()
  end
end

function M.tool_finished(conn, pane, tool, ev)
  local diff = nn(ev.diff)
  if type(diff) == "string" and diff ~= "" then
    require("agentls.diffs").show(pane.transcript, tool, diff)
  end
  if not pane.replaying and tool.tool ~= "apply_patch" then
    M.reload(conn, conn.tool_started_at)
  end
end

-- --- agent/diagnostics -------------------------------------------------------------------------

local SEVERITY = {
  [vim.diagnostic.severity.ERROR] = 1,
  [vim.diagnostic.severity.WARN] = 2,
  [vim.diagnostic.severity.INFO] = 3,
  [vim.diagnostic.severity.HINT] = 4,
}

--- The handler of agent/diagnostics: what vim.diagnostic holds (every
--- language server's and linter's), for one document or all.
function M.diagnostics(_, params)
  local uri = type(params) == "table" and nn(params.uri) or nil
  local bufnr
  if uri then
    bufnr = buffer_of(uri)
    if not bufnr then
      return { diagnostics = {} }
    end
  end
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if api.nvim_buf_is_valid(d.bufnr) and api.nvim_buf_get_name(d.bufnr) ~= "" then
      local line = api.nvim_buf_get_lines(d.bufnr, d.lnum, d.lnum + 1, false)[1] or ""
      local end_line = d.end_lnum or d.lnum
      local last = api.nvim_buf_get_lines(d.bufnr, end_line, end_line + 1, false)[1] or ""
      out[#out + 1] = {
        uri = vim.uri_from_bufnr(d.bufnr),
        range = {
          start = { line = d.lnum, character = util.utf16_col(line, d.col or 0) },
          ["end"] = { line = end_line, character = util.utf16_col(last, d.end_col or d.col or 0) },
        },
        severity = SEVERITY[d.severity] or 1,
        source = d.source,
        message = d.message,
      }
    end
  end
  return { diagnostics = out }
end

-- --- agentls.ask (the code actions' command) ------------------------------------------------------

--- The server's code actions ("Ask agentls about this", "Fix with agentls")
--- run here, in the transcript: a question opens the prompt for you to edit.
function M.ask_command(command, ctx)
  local argument = (nn(command.arguments) or {})[1]
  if type(argument) ~= "table" or type(argument.prompt) ~= "string" then
    util.error("agentls.ask: expected {prompt, uri?, range?}")
    return
  end
  local bufnr = ctx and ctx.bufnr or api.nvim_get_current_buf()
  local range = nn(argument.range)
  local opts = { prompt = argument.prompt }
  if type(range) == "table" then
    local last = range["end"].line + 1
    if range["end"].character == 0 and last > range.start.line + 1 then
      last = last - 1 -- a range that ends at the start of a line ends on the line before
    end
    opts.range = { range.start.line + 1, last }
  end
  api.nvim_buf_call(bufnr, function()
    if argument.kind == "ask" then
      vim.ui.input({ prompt = "Ask the agent: ", default = argument.prompt }, function(text)
        if text and text:match("%S") then
          opts.prompt = text
          require("agentls").ask(opts)
        end
      end)
    else
      require("agentls").ask(opts)
    end
  end)
end

return M
