-- setup({ approval = "always" }) reaches the server, and the plugin answers
-- agent/requestApproval: the question shows the command (a patch as a diff
-- in a float), and the answers are Allow once, Allow for this session and
-- Deny with a reason (asked with vim.ui.input).
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local asked = {}
local answers = { "Allow once", "Allow for this session", "Allow once", "Deny" }

--- The lines of the diff float open now, if one is.
local function diff_float()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.b[buf].agentls_approval_diff and vim.api.nvim_win_get_config(win).relative ~= "" then
      return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
  end
  return vim.NIL
end

vim.ui.select = function(items, opts, on_choice)
  local titles = vim.tbl_map(function(item)
    return opts.format_item and opts.format_item(item) or tostring(item)
  end, items)
  asked[#asked + 1] = { prompt = opts.prompt, items = titles, kind = opts.kind, diff = diff_float() }
  H.log("asked: " .. opts.prompt)
  local answer = table.remove(answers, 1)
  for i, title in ipairs(titles) do
    if title == answer then
      return on_choice(items[i], i)
    end
  end
  H.fail("no " .. tostring(answer) .. " in " .. vim.inspect(titles))
end

vim.ui.input = function(opts, on_confirm)
  H.check(opts.prompt:find("Reason", 1, true), "a reason is asked for a denial: " .. opts.prompt)
  on_confirm("not in my repo")
end

H.setup({ approval = "always" })
vim.cmd("AgentAsk run the commands")
H.wait_text("✓ Completed")
H.check(#asked == 4, "four questions (the command allowed for the session is not asked again): " .. vim.inspect(asked))
for _, question in ipairs(asked) do
  H.check(question.kind == "agentls_approval", "asked as an approval: " .. vim.inspect(question))
end
H.check(diff_float() == vim.NIL, "the diff float closed with its question")
local text = H.text()
H.check(text:find("Approval: echo first-approved — allowed once", 1, true), "the transcript notes it:\n" .. text)
H.check(text:find("Approval: echo again — allowed for this session", 1, true), "session noted")
H.check(text:find("Approval: touch denied.txt — denied: not in my repo", 1, true), "denial noted")
H.done({ asked = asked })
