-- Attachments: `#buffer`, `#file:PATH`, `#selection` and `#diagnostics` in a
-- prompt (typed in the compose buffer or on the command line) become context
-- the model sees. Each is resolved in the editor when the prompt is sent and
-- appended to it under a line of its own, the way the server appends a
-- selection; the prompt keeps the `#…` words, so the model can tell which
-- is which. The transcript shows the words you typed and what was attached.
local util = require("agentls.util")

local api = vim.api
local M = {}

-- Beyond these an attachment is cut (and says so): a whole file is context,
-- not a way to fill the model's window by accident.
M.MAX_LINES = 2000
M.MAX_BYTES = 100 * 1024

--- The attachments, in the order completion offers them.
M.names = {
  { word = "#buffer", menu = "the current buffer (its unsaved text)" },
  { word = "#file:", menu = "a file: #file:PATH (relative to the workspace)" },
  { word = "#selection", menu = "the last visual selection" },
  { word = "#diagnostics", menu = "the current buffer's diagnostics" },
}

local known = { buffer = true, file = true, selection = true, diagnostics = true }

-- The line that starts the attachments in the prompt the model sees.
M.HEADER = "Attached by the user:"

--- The attachment words of one line: {name, arg?, start, finish} (1-based
--- byte columns, inclusive). A word counts at the start of the line or after
--- white space or an opening bracket, so `a#buffer` or a URL's `#selection`
--- is left alone.
--- @param line string
--- @return {name: string, arg: string|nil, start: integer, finish: integer}[]
function M.tokens(line)
  local out = {}
  local init = 1
  while true do
    local start, finish, name = line:find("#(%a+)", init)
    if not start then
      return out
    end
    local before = start > 1 and line:sub(start - 1, start - 1) or ""
    if known[name] and (before == "" or before:match("[%s%(%[{\"']")) then
      local arg
      if name == "file" then
        local rest = line:match("^:(%S+)", finish + 1)
        if rest then
          -- "see #file:a.py." — trailing punctuation belongs to the sentence.
          arg = rest:gsub("[%.,;:!%?%)%]}\"']+$", "")
          finish = finish + 1 + #arg
        end
      else
        local after = line:sub(finish + 1, finish + 1)
        if after:match("[%w_:]") then
          name = nil -- "#buffers", "#selection_x": not ours
        end
      end
      if name and (name ~= "file" or (arg and arg ~= "")) then
        out[#out + 1] = { name = name, arg = arg, start = start, finish = finish }
      end
    end
    init = finish + 1
  end
end

--- Every attachment word of a (multi-line) text, each once.
function M.find(text)
  local out, seen = {}, {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    for _, token in ipairs(M.tokens(line)) do
      local key = token.name .. ":" .. (token.arg or "")
      if not seen[key] then
        seen[key] = true
        out[#out + 1] = token
      end
    end
  end
  return out
end

-- --- where attachments come from --------------------------------------------------------

local function is_file_buffer(buf)
  return buf and buf > 0 and api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == "" and api.nvim_buf_is_loaded(buf)
end

--- The buffer `#buffer` means when a command runs in `bufnr`: that buffer if
--- it holds a file (or is an unnamed one), else (a transcript, the compose
--- buffer) the alternate buffer, else the first file buffer shown in the tab.
function M.origin_buffer(bufnr)
  if is_file_buffer(bufnr) then
    return bufnr
  end
  local alternate = vim.fn.bufnr("#")
  if is_file_buffer(alternate) then
    return alternate
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    if is_file_buffer(buf) then
      return buf
    end
  end
end

--- What the attachments of a prompt refer to, taken when the command runs
--- (the compose buffer opens later and is then the current buffer).
--- @param root string the workspace root
--- @param range? {integer, integer} lines of a :'<,'> range in the current buffer
--- @return table origin {root, bufnr?, selection?, selection_display?}
function M.origin(root, range)
  local bufnr = M.origin_buffer(api.nvim_get_current_buf())
  local origin = { root = root, bufnr = bufnr }
  if bufnr then
    local line1, line2
    if range and bufnr == api.nvim_get_current_buf() then
      line1, line2 = range[1], range[2]
    else
      local s, e = api.nvim_buf_get_mark(bufnr, "<"), api.nvim_buf_get_mark(bufnr, ">")
      if s[1] > 0 and e[1] >= s[1] then
        line1, line2 = s[1], e[1]
      end
    end
    if line1 and bufnr == api.nvim_get_current_buf() then
      origin.selection, origin.selection_display = require("agentls.selection").get(bufnr, line1, line2, root)
    elseif line1 then
      local lines = api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false)
      origin.selection =
        { text = table.concat(lines, "\n"), range = { start = { line = line1 - 1 }, ["end"] = { line = line2 - 1 } } }
    end
  end
  return origin
end

local function buffer_label(bufnr, root)
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" then
    return ("[No Name] (buffer %d)"):format(bufnr)
  end
  return util.relative(vim.fs.normalize(vim.fn.fnamemodify(name, ":p")), root)
end

--- The absolute path of `#file:PATH` (relative paths start at the workspace root).
function M.file_path(path, root)
  path = vim.fn.expand(path)
  if not path:match("^/") then
    path = root .. "/" .. path
  end
  return vim.fs.normalize(path)
end

local function loaded_buffer(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.fs.normalize(api.nvim_buf_get_name(buf)) == path then
      return buf
    end
  end
end

--- Lines of text, cut to the limits; returns the text and a note when cut.
local function bounded(lines)
  local total, bytes, kept = #lines, 0, 0
  for i, line in ipairs(lines) do
    if i > M.MAX_LINES or bytes + #line + 1 > M.MAX_BYTES then
      break
    end
    bytes = bytes + #line + 1
    kept = i
  end
  local text = table.concat(lines, "\n", 1, kept)
  if kept < total then
    return text, ("the first %d of %d lines"):format(kept, total)
  end
  return text, nil
end

local function fenced(text, lang)
  local fence = "```"
  while text:find(fence, 1, true) do
    fence = fence .. "`"
  end
  return ("%s%s\n%s\n%s"):format(fence, lang or "", text, fence)
end

local function plural(n, word)
  return ("%d %s%s"):format(n, word, n == 1 and "" or "s")
end

local function read_file(path)
  local stat = vim.uv.fs_stat(path)
  if not stat then
    return nil, "no such file"
  elseif stat.type == "directory" then
    return nil, "a directory, not a file"
  end
  local f, err = io.open(path, "rb")
  if not f then
    return nil, tostring(err)
  end
  -- Read no more than can be attached (and a line more, to know it was cut).
  local data = f:read(M.MAX_BYTES + 1) or ""
  f:close()
  if data:find("\0", 1, true) then
    return nil, "a binary file"
  end
  local lines = vim.split(data:gsub("\r\n", "\n"), "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines, nil, stat.size > M.MAX_BYTES
end

local severity = { "error", "warning", "info", "hint" }

--- Resolves one attachment: {label, text} or nil and why not.
--- `label` is what the transcript shows, `text` what the model gets.
local resolvers = {}

function resolvers.buffer(_, origin)
  local buf = origin.bufnr
  if not buf then
    return nil, "no file buffer to attach"
  end
  local label = buffer_label(buf, origin.root)
  local text, cut = bounded(api.nvim_buf_get_lines(buf, 0, -1, false))
  local count = api.nvim_buf_line_count(buf)
  local desc = plural(count, "line") .. (vim.bo[buf].modified and ", unsaved changes" or "")
  return {
    label = ("%s (%s)"):format(label, desc),
    text = ("#buffer — %s (%s%s):\n%s"):format(
      label,
      desc,
      cut and ("; " .. cut) or "",
      fenced(text, vim.bo[buf].filetype)
    ),
  }
end

function resolvers.file(token, origin)
  local path = M.file_path(token.arg, origin.root)
  local label = util.relative(path, origin.root)
  local buf = loaded_buffer(path)
  local lines, err, truncated
  if buf then
    lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  else
    lines, err, truncated = read_file(path)
    if not lines then
      return nil, err
    end
  end
  local text, cut = bounded(lines)
  if truncated and not cut then
    cut = ("the first %s"):format(plural(#lines, "line"))
  end
  local lang = vim.filetype.match({ filename = path, buf = buf }) or ""
  return {
    label = ("%s (%s)"):format(label, plural(#lines, "line")),
    text = ("#file:%s — %s (%s%s):\n%s"):format(
      token.arg,
      label,
      plural(#lines, "line"),
      cut and ("; " .. cut) or "",
      fenced(text, lang)
    ),
  }
end

function resolvers.selection(_, origin)
  local selection = origin.selection
  if not selection then
    return nil, "no selection (select some text first, or use :'<,'>AgentAsk)"
  end
  local where = origin.bufnr and buffer_label(origin.bufnr, origin.root) or "?"
  local first, last = selection.range.start.line + 1, selection.range["end"].line + 1
  local lines = first == last and ("line %d"):format(first) or ("lines %d–%d"):format(first, last)
  if origin.selection_in_context then
    -- :'<,'>AgentAsk sends it as context.selection already.
    return { label = ("%s, %s (sent as the selection)"):format(where, lines) }
  end
  local text, cut = bounded(vim.split(selection.text, "\n", { plain = true }))
  return {
    label = ("%s, %s"):format(where, lines),
    text = ("#selection — %s, %s%s:\n%s"):format(
      where,
      lines,
      cut and (" (" .. cut .. ")") or "",
      fenced(text, origin.bufnr and vim.bo[origin.bufnr].filetype or "")
    ),
  }
end

function resolvers.diagnostics(_, origin)
  local buf = origin.bufnr
  if not buf then
    return nil, "no file buffer whose diagnostics to attach"
  end
  local where = buffer_label(buf, origin.root)
  local items = vim.diagnostic.get(buf)
  table.sort(items, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    return a.col < b.col
  end)
  local lines = {}
  for _, d in ipairs(items) do
    local source = d.source and (" [" .. d.source .. "]") or ""
    local message = tostring(d.message):gsub("\n", " ")
    lines[#lines + 1] = ("- line %d, column %d: %s: %s%s"):format(
      d.lnum + 1,
      d.col + 1,
      severity[d.severity] or "note",
      message,
      source
    )
  end
  local text = #lines > 0 and bounded(lines) or "(none)"
  local count = plural(#items, "diagnostic")
  return {
    label = ("%s (%s)"):format(where, count),
    text = ("#diagnostics — %s (%s):\n%s"):format(where, count, text),
  }
end

--- What one attachment would attach, in a few words, or why it cannot:
--- cheap (nothing is read), for the hints beside the compose buffer's text.
--- @return string|nil what, string|nil err
function M.describe(token, origin)
  if token.name == "file" then
    local path = M.file_path(token.arg, origin.root)
    local stat = vim.uv.fs_stat(path)
    if not stat then
      return nil, "no such file"
    elseif stat.type == "directory" then
      return nil, "a directory"
    end
    return util.relative(path, origin.root)
  elseif token.name == "buffer" or token.name == "diagnostics" then
    if not origin.bufnr then
      return nil, "no file buffer"
    end
    local label = buffer_label(origin.bufnr, origin.root)
    if token.name == "diagnostics" then
      return ("%s: %s"):format(label, plural(#vim.diagnostic.get(origin.bufnr), "diagnostic"))
    end
    return label
  elseif token.name == "selection" then
    if not origin.selection then
      return nil, "no selection"
    end
    local r = origin.selection.range
    return ("lines %d–%d"):format(r.start.line + 1, r["end"].line + 1)
  end
end

--- The prompt the model gets: `text`, then each attachment it names.
--- @param text string the prompt as typed
--- @param origin table see M.origin
--- @return string|nil prompt, string|nil display (what was attached, for the transcript), string[]|nil errors
function M.expand(text, origin)
  local tokens = M.find(text)
  if #tokens == 0 then
    return text, nil, nil
  end
  local blocks, labels, errors = {}, {}, {}
  for _, token in ipairs(tokens) do
    local word = "#" .. token.name .. (token.arg and (":" .. token.arg) or "")
    local ok, resolved, err = pcall(resolvers[token.name], token, origin)
    if not ok then
      resolved, err = nil, tostring(resolved)
    end
    if resolved then
      blocks[#blocks + 1] = resolved.text -- nil: nothing to add
      labels[#labels + 1] = ("%s %s"):format(word, resolved.label)
    else
      errors[#errors + 1] = ("%s: %s"):format(word, err or "cannot attach it")
    end
  end
  if #errors > 0 then
    return nil, nil, errors
  end
  if #blocks == 0 then
    return text, "attached: " .. table.concat(labels, " · "), nil
  end
  local prompt = text .. "\n\n" .. M.HEADER .. "\n\n" .. table.concat(blocks, "\n\n")
  return prompt, "attached: " .. table.concat(labels, " · "), nil
end

--- A prompt as the model got it, split back into what was typed and what
--- was attached (for transcripts rebuilt from the server's record).
--- @return string typed, string[] attached the first line of each attachment
function M.split(prompt)
  local at = prompt:find("\n\n" .. M.HEADER .. "\n\n", 1, true)
  if not at then
    return prompt, {}
  end
  local attached = {}
  for line in prompt:sub(at):gmatch("\n(#%a[^\n]* — [^\n]*):\n") do
    attached[#attached + 1] = (line:gsub(":$", ""))
  end
  return prompt:sub(1, at - 1), attached
end

-- --- completion ------------------------------------------------------------------------

--- Files and directories under `root` that complete `lead` (a path relative to it).
function M.complete_path(lead, root)
  local dir, base = lead:match("^(.*/)([^/]*)$")
  dir, base = dir or "", base or lead
  local abs = dir:match("^/") and dir or (root .. "/" .. dir)
  local out = {}
  local ok, iter = pcall(vim.fs.dir, abs)
  if not ok then
    return out
  end
  for name, kind in iter do
    if name:sub(1, #base) == base and (base ~= "" or name:sub(1, 1) ~= ".") then
      out[#out + 1] = dir .. name .. (kind == "directory" and "/" or "")
    end
  end
  table.sort(out)
  return out
end

--- Completion items for the word `base` (it starts with "#").
--- @return table[] complete-items
function M.complete(base, root)
  local items = {}
  local path = base:match("^#file:(.*)$")
  if path then
    for _, candidate in ipairs(M.complete_path(path, root)) do
      items[#items + 1] = { word = "#file:" .. candidate, abbr = candidate, menu = "file", dup = 1 }
    end
    return items
  end
  for _, name in ipairs(M.names) do
    if name.word:sub(1, #base) == base then
      items[#items + 1] = { word = name.word, menu = name.menu }
    end
  end
  return items
end

--- 'omnifunc' of the compose buffer (<C-x><C-o>; typing `#` starts it).
function M.omnifunc(findstart, base)
  local line = api.nvim_get_current_line()
  local col = api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local start = before:find("#[%w:/%._%-~]*$")
    if not start or (start > 1 and not before:sub(start - 1, start - 1):match("[%s%(%[{\"']")) then
      return -3 -- not an attachment word: no completion, no message
    end
    return start - 1
  end
  local root = vim.b.agentls_root or vim.fn.getcwd()
  return M.complete(base, root)
end

return M
