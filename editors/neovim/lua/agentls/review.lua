-- Review mode: each patch waits for you in a diff view (a tab page per
-- file: as it is now on the left, as the patch leaves it on the right).
-- `A` accepts, `R` rejects with a reason the agent reads, `q` rejects
-- (keys: `keymaps.review_accept` / `review_reject`).
local config = require("agentls.config")
local util = require("agentls.util")

local api = vim.api
local M = {}

--- A unified diff as files and hunks.
--- @return {path: string, created: boolean, deleted: boolean, hunks: {old_start: integer, lines: string[]}[]}[]
function M.parse(diff)
  local files, file, hunk, old_name = {}, nil, nil, nil
  for _, line in ipairs(vim.split(diff, "\n", { plain = true })) do
    if line:sub(1, 4) == "--- " then
      old_name, hunk = line:sub(5), nil
    elseif line:sub(1, 4) == "+++ " and old_name then
      local new_name = line:sub(5)
      local path = (new_name == "/dev/null" and old_name or new_name):gsub("^[ab]/", "")
      file = { path = path, created = old_name == "/dev/null", deleted = new_name == "/dev/null", hunks = {} }
      files[#files + 1] = file
      old_name = nil
    elseif line:sub(1, 2) == "@@" and file then
      hunk = { old_start = tonumber(line:match("^@@ %-(%d+)")) or 1, lines = {} }
      file.hunks[#file.hunks + 1] = hunk
    elseif hunk and line:match("^[ +%-\\]") then
      hunk.lines[#hunk.lines + 1] = (line:gsub("\r$", ""))
    end
  end
  return files
end

--- `before` (a list of lines) with the file's hunks applied; nil if they do
--- not fit it (it changed since the server made the diff).
function M.apply(before, file)
  if file.deleted then
    return {}
  end
  local out, cursor = {}, 1
  for _, hunk in ipairs(file.hunks) do
    local start = math.max(1, hunk.old_start)
    if file.created or #before == 0 then
      start = 1
    end
    if start < cursor or start > #before + 1 then
      return nil
    end
    vim.list_extend(out, before, cursor, start - 1)
    cursor = start
    for _, line in ipairs(hunk.lines) do
      local kind, text = line:sub(1, 1), line:sub(2)
      if kind == " " or kind == "-" then
        if before[cursor] ~= text then
          return nil
        end
        cursor = cursor + 1
      end
      if kind == " " or kind == "+" then
        out[#out + 1] = text
      end
    end
  end
  vim.list_extend(out, before, cursor, #before)
  return out
end

--- The text of `path` now: its buffer's, if loaded, else the file's.
local function current_lines(root, path)
  local full = root .. "/" .. path
  local buf = vim.fn.bufnr(full)
  if buf ~= -1 and api.nvim_buf_is_loaded(buf) then
    return api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  local ok, lines = pcall(vim.fn.readfile, full)
  return ok and vim.tbl_map(function(line)
    return (line:gsub("\r$", ""))
  end, lines) or {}
end

local function scratch(lines, name, filetype)
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  pcall(api.nvim_buf_set_name, buf, name)
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

--- Opens the review tab pages; `done(answer)` once the user decides.
--- @param params agentls.ApprovalParams agent/requestApproval params (with `diff`)
--- @param root string the workspace
function M.ask(params, root, done)
  local files = M.parse(util.nn(params.diff) or "")
  local tabs, buffers, answered = {}, {}, false
  local origin = api.nvim_get_current_tabpage()
  local function finish(answer)
    if answered then
      return
    end
    answered = true
    for _, tab in ipairs(tabs) do
      if api.nvim_tabpage_is_valid(tab) then
        pcall(vim.cmd, "tabclose " .. api.nvim_tabpage_get_number(tab))
      end
    end
    for _, buf in ipairs(buffers) do
      if api.nvim_buf_is_valid(buf) then
        pcall(api.nvim_buf_delete, buf, { force = true })
      end
    end
    if api.nvim_tabpage_is_valid(origin) then
      api.nvim_set_current_tabpage(origin)
    end
    done(answer)
  end
  local keys = config.options.keymaps or {}
  local accept_key = keys.review_accept or "A"
  local reject_key = keys.review_reject or "R"
  local function reject_with_reason()
    require("agentls.approval").deny_with_reason("Why reject it? (the agent reads this): ", finish)
  end
  local hint = ("agentls review: %s accept · %s reject (with a reason) · q reject"):format(accept_key, reject_key)
  for index, file in ipairs(files) do
    local before = file.created and {} or current_lines(root, file.path)
    local after = M.apply(before, file)
    vim.cmd("tabnew")
    local tab = api.nvim_get_current_tabpage()
    tabs[#tabs + 1] = tab
    local filetype = vim.filetype.match({ filename = file.path }) or ""
    local suffix = #files > 1 and (" (%d of %d)"):format(index, #files) or ""
    local left = scratch(before, ("agentls://review/%d/now/%s"):format(#tabs, file.path), filetype)
    local right
    if after then
      right = scratch(after, ("agentls://review/%d/patched/%s"):format(#tabs, file.path), filetype)
    else
      -- The file changed since the diff was made: show the diff itself.
      right = scratch(vim.split(util.nn(params.diff) or "", "\n", { plain = true }), "agentls://review/diff", "diff")
    end
    buffers[#buffers + 1], buffers[#buffers + 2] = left, right
    local empty = api.nvim_get_current_buf()
    api.nvim_win_set_buf(0, left)
    if api.nvim_buf_is_valid(empty) and empty ~= left then
      pcall(api.nvim_buf_delete, empty, { force = true })
    end
    local left_win = api.nvim_get_current_win()
    vim.cmd("vsplit")
    local right_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(right_win, right)
    if after then
      for _, win in ipairs({ left_win, right_win }) do
        api.nvim_win_call(win, function()
          vim.cmd("diffthis")
        end)
      end
    end
    vim.wo[left_win].winbar = ("%s — now%s"):format(file.path, suffix)
    vim.wo[right_win].winbar = ("%s — after the patch%s   [%s]"):format(file.path, suffix, hint)
    for _, buf in ipairs({ left, right }) do
      local opts = { buffer = buf, nowait = true }
      vim.keymap.set("n", accept_key, function()
        finish({ decision = "allow" })
      end, vim.tbl_extend("force", opts, { desc = "agentls: accept the patch" }))
      vim.keymap.set(
        "n",
        reject_key,
        reject_with_reason,
        vim.tbl_extend("force", opts, { desc = "agentls: reject the patch" })
      )
      vim.keymap.set("n", "q", function()
        finish({ decision = "deny" })
      end, vim.tbl_extend("force", opts, { desc = "agentls: reject the patch" }))
      -- Closing the view without an answer rejects: nothing changes that was not accepted.
      api.nvim_create_autocmd("BufWipeout", {
        buffer = buf,
        once = true,
        callback = function()
          vim.schedule(function()
            finish({ decision = "deny", reason = "the user closed the review without accepting" })
          end)
        end,
      })
    end
  end
  if #files == 0 then
    finish({ decision = "deny", reason = "the patch has no diff to review" })
    return
  end
  api.nvim_set_current_tabpage(tabs[1])
  util.notify(("review the patch: %s"):format(hint:gsub("^agentls review: ", "")))
end

return M
