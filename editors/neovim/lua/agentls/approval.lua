-- Approvals: the server asks (agent/requestApproval) before a tool call its
-- approval policy guards — a command outside the sandbox, a patch where no
-- sandbox confines it, … The question shows the command (and why the model
-- wants it) with vim.ui.select; a patch is shown as a diff in a float beside
-- it. Three answers: Allow once, Allow for this session (exactly this command,
-- or edits to these files), Deny — with a reason the model reads.
--
-- The server runs request handlers in a coroutine: the handler yields until
-- the user answered, then returns the answer as the response.
local util = require("agentls.util")

local api = vim.api
local M = {}

M.ALLOW_ONCE = "Allow once"
M.ALLOW_SESSION = "Allow for this session"
M.DENY = "Deny"
M.choices = { M.ALLOW_ONCE, M.ALLOW_SESSION, M.DENY }
local DECISIONS = {
  [M.ALLOW_ONCE] = "allow",
  [M.ALLOW_SESSION] = "allowSession",
  [M.DENY] = "deny",
}

--- The capability that makes the server ask us (instead of window/showMessageRequest).
M.client_capability = { agentls = { requestApproval = true } }

--- The question as lines: what, the command, why.
--- @return string[]
function M.describe(params)
  local lines = { ("agentls (%s) wants to: %s"):format(params.pane or "main", params.title or params.tool or "?") }
  local command = util.nn(params.command)
  if command then
    -- A shell command line gets a prompt; another tool's call is shown as it is.
    local shell = params.tool == "exec_command" or params.tool == "start_process"
    lines[#lines + 1] = (shell and "  $ " or "  ") .. command
  end
  local why = util.nn(params.justification)
  if why then
    lines[#lines + 1] = "  why: " .. why
  end
  return lines
end

--- A float with the patch's diff, beside the question. Returns its window.
--- @return integer|nil win
function M.show_diff(diff)
  if type(diff) ~= "string" or diff == "" then
    return nil
  end
  local buf = api.nvim_create_buf(false, true)
  local lines = vim.split(diff, "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = "diff"
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local width = math.min(math.max(40, vim.o.columns - 10), 120)
  local height = math.min(#lines, math.max(5, vim.o.lines - 10))
  local win = api.nvim_open_win(buf, false, {
    relative = "editor",
    row = 1,
    col = math.max(0, math.floor((vim.o.columns - width) / 2)),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " patch to approve ",
    title_pos = "center",
  })
  vim.b[buf].agentls_approval_diff = true
  return win
end

--- A denial, with the reason the user gives (asked with `prompt`; optional).
function M.deny_with_reason(prompt, finish)
  vim.ui.input({ prompt = prompt }, function(reason)
    local answer = { decision = "deny" }
    if reason and reason:match("%S") then
      answer.reason = reason
    end
    finish(answer)
  end)
end

--- Ask the user; `done(answer)` gets {decision, reason?}.
--- @param params table agent/requestApproval params
--- @param done fun(answer: table)
--- @param root? string the workspace (review mode shows its files)
function M.ask(params, done, root)
  if util.nn(params.review) == true and root then
    -- Review mode: the patch in a diff view, with accept/reject keys.
    require("agentls.review").ask(params, root, done)
    return
  end
  local float = M.show_diff(util.nn(params.diff))
  local function finish(answer)
    if float and api.nvim_win_is_valid(float) then
      api.nvim_win_close(float, true)
    end
    done(answer)
  end
  vim.ui.select(M.choices, {
    prompt = table.concat(M.describe(params), "\n") .. "\nAllow it?",
    kind = "agentls_approval",
  }, function(choice)
    if choice == M.DENY then
      M.deny_with_reason("Reason for the agent (optional): ", finish)
    else
      -- No choice (escape) denies: nothing runs that the user did not allow.
      finish({ decision = DECISIONS[choice] or "deny" })
    end
  end)
end

--- The handler of agent/requestApproval (runs in the coroutine Neovim gives
--- server requests). `note(pane, text)` tells the pane's transcript.
function M.handler(note, root)
  return function(_, params)
    if type(params) ~= "table" then
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams)
    end
    local co, is_main = coroutine.running()
    local answer
    if co and not is_main then
      M.ask(params, function(result)
        -- Scheduled: a synchronous vim.ui.select would resume before we yield.
        vim.schedule(function()
          coroutine.resume(co, result)
        end)
      end, root)
      answer = coroutine.yield()
    else
      answer = { decision = "deny", reason = "the editor could not ask the user" }
    end
    local label = ({ allow = "allowed once", allowSession = "allowed for this session", deny = "denied" })[answer.decision]
    local what = util.nn(params.command) or params.title or params.tool
    note(
      params.pane or "main",
      ("Approval: %s — %s%s"):format(
        util.shorten(what or "?", 120),
        label,
        answer.reason and (": " .. answer.reason) or ""
      )
    )
    return answer
  end
end

return M
