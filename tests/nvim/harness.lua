-- Shared by every tests/nvim/*.lua script; run by tests/test_neovim.py as
--   nvim --headless --clean -l tests/nvim/<test>.lua
-- Environment (set by the pytest side):
--   AGENTLS_PLUGIN   the plugin directory (editors/neovim)
--   AGENTLS_SERVER   JSON list: the server command
--   AGENTLS_BASE_URL the fake model's base URL
--   AGENTLS_WAIT_MS  the longest any single wait may take
-- The script talks to pytest over stdin/stdout: `H.step(name, data)` prints
-- "@@step <name> <json>" and waits (with a timeout) for "@@go <json>", so the
-- Python side can check the fake model or /proc, release gates, and script
-- replies at exactly that point. Nothing here sleeps: every wait is a
-- vim.wait on a condition, with a timeout.
local H = {}

H.WAIT = tonumber(os.getenv("AGENTLS_WAIT_MS")) or 15000

vim.opt.rtp:prepend(assert(os.getenv("AGENTLS_PLUGIN"), "AGENTLS_PLUGIN is not set"))
-- Editing a .py file would probe for a Python provider (seconds): not under test.
vim.g.loaded_python3_provider = 0
vim.cmd("runtime plugin/agentls.lua")

-- Every message the user would see.
H.messages = {}
vim.notify = function(msg, level)
  table.insert(H.messages, { msg = msg, level = level or vim.log.levels.INFO })
  io.stdout:write(("@@notify %d %s\n"):format(level or 2, (msg:gsub("\n", " "))))
  io.stdout:flush()
end

-- Every LspProgress event (the standard path statusline plugins use).
H.progress = {}
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev)
    local value = ev.data.params.value
    table.insert(H.progress, { kind = value.kind, title = value.title, message = value.message })
  end,
})

-- --- talking to pytest ----------------------------------------------------------------

local input = ""
local stdin = assert(vim.uv.new_pipe(false))
stdin:open(0)
stdin:read_start(function(err, data)
  assert(not err, err)
  if data then
    input = input .. data
  end
end)

local started = vim.uv.hrtime()

local function emit(kind, name, data)
  io.stdout:write(("@@%s %s %s\n"):format(kind, name, vim.json.encode(data or vim.empty_dict())))
  io.stdout:flush()
end

--- A timestamped line in the output pytest shows when a test fails.
function H.log(what)
  io.stdout:write(("@@log %6.0f ms %s\n"):format((vim.uv.hrtime() - started) / 1e6, what))
  io.stdout:flush()
end

--- Tell pytest we reached `name` and wait until it says go; returns its data.
function H.step(name, data)
  H.log("step " .. name)
  emit("step", name, data)
  local line
  local ok = vim.wait(H.WAIT * 2, function()
    local nl = input:find("\n", 1, true)
    if nl then
      line = input:sub(1, nl - 1)
      input = input:sub(nl + 1)
      return true
    end
    return false
  end, 10)
  assert(ok, "no @@go from pytest after step " .. name)
  local payload = assert(line:match("^@@go (.*)$"), "unexpected line from pytest: " .. line)
  return vim.json.decode(payload)
end

-- --- setup --------------------------------------------------------------------------------

function H.server_cmd()
  return vim.json.decode((assert(os.getenv("AGENTLS_SERVER"), "AGENTLS_SERVER is not set")))
end

--- setup() with the test server and the fake model; `opts` override.
function H.setup(opts)
  local merged = vim.tbl_deep_extend("force", {
    cmd = H.server_cmd(),
    base_url = os.getenv("AGENTLS_BASE_URL"),
    model = "test-model",
    transcript = { render_interval_ms = 20 },
  }, opts or {})
  if merged.cmd == false then
    merged.cmd = nil -- the default: agentls on $PATH
  end
  require("agentls").setup(merged)
  return merged
end

-- --- looking at the editor ------------------------------------------------------------------

--- Fails the test with `what`, plus what the transcripts and messages show.
function H.fail(what)
  local lines = { "FAILED: " .. what }
  local ok, connection = pcall(require, "agentls.connection")
  if ok then
    for root, conn in pairs(connection.connections) do
      for name, pane in pairs(conn.panes) do
        lines[#lines + 1] = ("--- transcript %s %s ---"):format(root, name)
        lines[#lines + 1] = pane.transcript:text()
      end
    end
  end
  lines[#lines + 1] = "--- messages ---"
  for _, m in ipairs(H.messages) do
    lines[#lines + 1] = ("[%d] %s"):format(m.level, m.msg)
  end
  error(table.concat(lines, "\n"), 0)
end

function H.wait(predicate, what, timeout)
  H.log("wait for " .. what)
  local ok = vim.wait(timeout or H.WAIT, function()
    local good, value = pcall(predicate)
    return good and value
  end, 10)
  if not ok then
    H.fail("timed out waiting for " .. what)
  end
end

function H.check(value, what)
  if not value then
    H.fail(what)
  end
  return value
end

--- The connection (server, panes) of the current buffer's workspace.
function H.connection()
  local connection = require("agentls.connection")
  return connection.get(connection.root_of(vim.api.nvim_get_current_buf()), false)
end

function H.pane(name)
  local conn = H.connection()
  return conn and conn.panes[name or "main"]
end

--- The text of a pane's transcript buffer (as the user sees it).
function H.text(name)
  local pane = H.pane(name)
  if not pane then
    return ""
  end
  return table.concat(vim.api.nvim_buf_get_lines(pane.transcript.buf, 0, -1, false), "\n")
end

--- Waits until the pane's transcript contains `needle` (plain text).
function H.wait_text(needle, name, timeout)
  H.wait(function()
    return H.text(name):find(needle, 1, true) ~= nil
  end, ("%q in the %s transcript"):format(needle, name or "main"), timeout)
end

function H.has_message(pattern, level)
  for _, m in ipairs(H.messages) do
    if m.msg:find(pattern) and (level == nil or m.level == level) then
      return true
    end
  end
  return false
end

--- The windows (in this tab page) showing a pane's transcript.
function H.windows(name)
  local pane = H.pane(name)
  if not pane then
    return {}
  end
  return vim.tbl_filter(function(win)
    return vim.api.nvim_win_get_buf(win) == pane.transcript.buf
  end, vim.api.nvim_tabpage_list_wins(0))
end

--- True if the process exists and is not a zombie.
function H.pid_alive(pid)
  local f = io.open(("/proc/%d/stat"):format(pid), "r")
  if not f then
    return false
  end
  local stat = f:read("*a") or ""
  f:close()
  local state = stat:match("%) (%a)")
  return state ~= nil and state ~= "Z"
end

function H.edit(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
end

--- Ends the test: stops the servers (waiting for them to exit), reports success.
function H.done(data)
  H.log("done")
  if os.getenv("AGENTLS_NVIM_TRACE") then
    for root, conn in pairs(require("agentls.connection").connections) do
      for name, pane in pairs(conn.panes) do
        H.log(("transcript %s %s:\n%s"):format(root, name, pane.transcript:text()))
      end
    end
  end
  local clients = {}
  for _, conn in pairs(require("agentls.connection").connections) do
    local client = conn:client()
    if client then
      conn.stopping = true
      clients[#clients + 1] = client
      require("agentls.util").stop(client)
    end
  end
  vim.wait(H.WAIT, function()
    for _, client in ipairs(clients) do
      if not require("agentls.util").is_stopped(client) then
        return false
      end
    end
    return true
  end, 10)
  H.log("servers stopped")
  emit("done", "ok", data)
  vim.cmd("qall!")
end

return H
