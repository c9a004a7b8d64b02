-- The editor's selection as protocol v1 `context.selection` ({uri, range, text}).
local util = require("agentls.util")

local api = vim.api
local M = {}

local function uri_of(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return ("untitled:%d"):format(bufnr), nil
  end
  local path = vim.fs.normalize(vim.fn.fnamemodify(name, ":p"))
  return vim.uri_from_fname(path), path
end

--- The selection of `bufnr` over lines `line1`..`line2` (1-based): charwise
--- when it is the last visual selection made with `v` on those lines,
--- blockwise for CTRL-V, else whole lines.
--- @return table selection, string display
function M.get(bufnr, line1, line2, root)
  local lines = api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false)
  local first, last = lines[1] or "", lines[#lines] or ""
  local mode = vim.fn.visualmode()
  local vs, ve = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  local from_visual = vs[2] == line1 and ve[2] == line2
  local text, start_char, end_char
  if from_visual and mode == "v" then
    local scol = math.min(vs[3] - 1, #first)
    local ecol0 = math.min(ve[3] - 1, math.max(#last - 1, 0))
    local char = last:sub(ecol0 + 1):match("^[%z\1-\127\194-\244][\128-\191]*") or ""
    local ecol = math.min(ecol0 + #char, #last)
    if line1 == line2 and ecol < scol then
      ecol = scol
    end
    text = table.concat(api.nvim_buf_get_text(bufnr, line1 - 1, scol, line2 - 1, ecol, {}), "\n")
    start_char, end_char = util.utf16_col(first, scol), util.utf16_col(last, ecol)
  elseif from_visual and mode == "\22" then
    text = table.concat(vim.fn.getregion(vs, ve, { type = "\22" }), "\n")
    start_char, end_char = 0, util.utf16_col(last, #last)
  else
    text = table.concat(lines, "\n")
    start_char, end_char = 0, util.utf16_col(last, #last)
  end
  local uri, path = uri_of(bufnr)
  local selection = {
    uri = uri,
    range = {
      start = { line = line1 - 1, character = start_char },
      ["end"] = { line = line2 - 1, character = end_char },
    },
    text = text,
  }
  local where = path and util.relative(path, root) or ("buffer " .. bufnr)
  local display = line1 == line2 and ("selection: %s, line %d"):format(where, line1)
    or ("selection: %s, lines %d–%d"):format(where, line1, line2)
  return selection, display
end

--- URIs of the files open in the workspace (context.documents).
function M.documents(root)
  local uris = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if vim.bo[buf].buflisted and vim.bo[buf].buftype == "" and api.nvim_buf_is_loaded(buf) then
      local uri, path = uri_of(buf)
      if path and path:sub(1, #root + 1) == root .. "/" then
        uris[#uris + 1] = uri
      end
    end
  end
  return uris
end

return M
