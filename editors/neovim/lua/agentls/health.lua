-- :checkhealth agentls
local config = require("agentls.config")
local util = require("agentls.util")

local health = vim.health
local M = {}

local TIMEOUT = 15000

local function check_neovim()
  health.start("agentls: Neovim")
  local v = vim.version()
  local text = ("Neovim %d.%d.%d%s"):format(
    v.major,
    v.minor,
    v.patch,
    v.prerelease and ("-" .. tostring(v.prerelease)) or ""
  )
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok(text .. (vim.fn.has("nvim-0.11") == 1 and "" or " (0.10: supported, tested on 0.11 and 0.12)"))
  else
    health.error(text .. ": agentls needs Neovim 0.10 or newer")
  end
end

local function check_options()
  health.start("agentls: options")
  if #config.problems == 0 then
    health.ok("setup() options are valid")
  end
  for _, problem in ipairs(config.problems) do
    health.error("setup(): " .. problem, { "see :help agentls-options" })
  end
end

--- @return string[]|nil
local function check_server()
  health.start("agentls: server")
  local cmd, err = config.server_cmd()
  if not cmd then
    health.error(err, {
      "install the server from a clone of the agentls repository (`pip install .` or `pipx install .`) so `agentls` is on $PATH",
      "or setup({ python = '/path/to/venv/bin/python' })",
      "or setup({ cmd = { '/path/to/agentls', 'serve' } })",
    })
    return nil
  end
  health.ok("server command: " .. table.concat(cmd, " ") .. " (" .. vim.fn.exepath(cmd[1]) .. ")")
  local version_cmd = config.version_cmd(cmd)
  if version_cmd then
    local ok, result = pcall(function()
      return vim.system(version_cmd, { text = true, env = config.options.cmd_env }):wait(TIMEOUT)
    end)
    if ok and result.code == 0 then
      health.ok("server version: " .. vim.trim(result.stdout or ""))
    else
      local why = ok and vim.trim((result.stderr or "") .. (result.stdout or "")) or tostring(result)
      health.error("`" .. table.concat(version_cmd, " ") .. "` failed: " .. why)
      return nil
    end
  end
  return cmd
end

local function check_model()
  health.start("agentls: model")
  local env = config.options.cmd_env or {}
  local key = env.OPENAI_API_KEY or vim.env.OPENAI_API_KEY
  local base_url = config.options.base_url or env.OPENAI_BASE_URL or vim.env.OPENAI_BASE_URL
  if key and key ~= "" then
    health.ok("OPENAI_API_KEY is set in the server's environment")
  end
  if base_url and base_url ~= "" then
    health.info("base URL: " .. require("agentls.probe").shown(base_url))
  end
  if not (key and key ~= "") and not (base_url and base_url ~= "") then
    health.warn("no model is configured: the first prompt will fail", {
      "export OPENAI_API_KEY before starting Neovim (the key never goes through the plugin's options)",
      "or setup({ base_url = 'http://…/v1' }) for a Responses-compatible server",
    })
  end
  if config.options.model then
    health.info("model: " .. config.options.model)
  end
  -- A real request: unreachable, a refused key, or OK.
  for _, found in ipairs(require("agentls.probe").check()) do
    health[found[1]](found[2], found[3])
  end
end

local function check_sandbox()
  health.start("agentls: sandbox")
  local mode = config.options.sandbox or "workspace-write"
  if mode == "off" then
    health.info('sandbox = "off": commands run as you; with approval "on-request" every command asks')
    return
  end
  if vim.fn.has("linux") ~= 1 then
    health.warn("the sandbox needs Linux (bubblewrap): commands run unsandboxed and ask first", {
      "see docs/security.md in the agentls repository for what that means",
    })
  elseif vim.fn.executable("bwrap") ~= 1 and not (vim.env.AGENTLS_BWRAP and vim.env.AGENTLS_BWRAP ~= "") then
    health.warn("bubblewrap (bwrap) is not installed: commands run unsandboxed and ask first", {
      "install it: sudo apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora)",
    })
  else
    health.ok(
      ("bubblewrap found: commands run in the sandbox (%s, network %s)"):format(
        mode,
        config.options.network and "allowed" or "off"
      )
    )
  end
end

--- Which AGENTS.md files a session of this workspace follows.
local function check_instructions(rpc)
  rpc.notify("initialized", vim.empty_dict())
  local answer
  rpc.request("agent/instructions", { pane = "main" }, function(err, result)
    answer = { err = err, result = result }
  end)
  vim.wait(TIMEOUT, function()
    return answer ~= nil
  end, 20)
  if not answer then
    health.warn("the server did not answer agent/instructions")
  elseif answer.err then
    health.warn("agent/instructions failed: " .. util.describe_error(answer.err))
  else
    health.ok(require("agentls.context").instructions_text(util.nn(answer.result) or {}))
  end
end

--- Starts a throwaway server over stdio (not a vim.lsp client: nothing shows
--- up in :LspInfo), sends initialize, checks the answer, shuts it down.
local function check_initialize(cmd)
  health.start("agentls: initialize")
  local root = require("agentls.connection").root_of(vim.api.nvim_get_current_buf())
  local exited, initialized, shut = nil, nil, false
  local dispatchers = {
    notification = function() end,
    server_request = function()
      return vim.NIL
    end,
    on_exit = function(code, signal)
      exited = { code = code, signal = signal }
    end,
    on_error = function() end,
  }
  local ok, rpc = pcall(vim.lsp.rpc.start, cmd, dispatchers, { cwd = root, env = config.options.cmd_env })
  if not ok or not rpc then
    health.error("could not start the server: " .. tostring(rpc))
    return
  end
  local started = vim.uv.hrtime()
  rpc.request("initialize", {
    processId = vim.fn.getpid(),
    clientInfo = { name = "agentls checkhealth" },
    rootUri = vim.uri_from_fname(root),
    workspaceFolders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = vim.lsp.protocol.make_client_capabilities(),
    initializationOptions = config.init_options(root),
  }, function(err, result)
    initialized = { err = err, result = result }
  end)
  vim.wait(TIMEOUT, function()
    return initialized ~= nil or exited ~= nil
  end, 20)
  if not initialized then
    if exited then
      health.error(
        ("the server exited before answering initialize (exit code %d, signal %d)"):format(exited.code, exited.signal),
        { "run `" .. table.concat(cmd, " ") .. "` in a terminal to see why", "see the LSP log: " .. util.lsp_log() }
      )
    else
      health.error(("the server did not answer initialize within %d s"):format(TIMEOUT / 1000))
      rpc.terminate()
    end
    return
  end
  local ms = (vim.uv.hrtime() - started) / 1e6
  if initialized.err then
    health.error("initialize failed: " .. util.describe_error(initialized.err))
  else
    local result = util.nn(initialized.result) or {}
    local caps = util.nn(result.capabilities) or {}
    local agent = util.nn(caps.experimental) and util.nn(caps.experimental.agentls) or nil
    local info = util.nn(result.serverInfo)
    local name = info and ("%s %s"):format(info.name or "?", util.nn(info.version) or "") or "the server"
    if type(agent) ~= "table" then
      health.error(name .. " answered initialize without capabilities.experimental.agentls")
    elseif agent.protocolVersion ~= util.PROTOCOL_VERSION then
      health.error(
        ("%s speaks protocol version %s; this plugin speaks %d"):format(
          name,
          tostring(agent.protocolVersion),
          util.PROTOCOL_VERSION
        )
      )
    else
      local window = tonumber(util.nn(agent.contextWindow))
      local efforts = util.nn(agent.efforts) or {}
      health.ok(
        ("%s answered initialize in %d ms: protocol version %d, model %s, efforts %s%s"):format(
          name,
          ms,
          util.PROTOCOL_VERSION,
          tostring(util.nn(agent.model) or "?"),
          #efforts > 0 and table.concat(efforts, ", ") or "none (it does not reason)",
          window and (", context window " .. require("agentls.context").tokens(window)) or ""
        )
      )
      check_instructions(rpc)
    end
  end
  rpc.request("shutdown", nil, function()
    shut = true
  end)
  vim.wait(5000, function()
    return shut or exited ~= nil
  end, 20)
  rpc.notify("exit")
  if not vim.wait(5000, function()
    return exited ~= nil
  end, 20) then
    rpc.terminate()
  end
end

local function check_connections()
  local connections = require("agentls.connection").connections
  if next(connections) == nil then
    return
  end
  health.start("agentls: running servers")
  for root, conn in pairs(connections) do
    local client = conn:client()
    if client then
      health.ok(
        ("%s: client %d, panes %s"):format(
          vim.fn.fnamemodify(root, ":~"),
          client.id,
          table.concat(conn:pane_names(), ", ")
        )
      )
      require("agentls.mcp").check(client, health, TIMEOUT)
    else
      health.info(vim.fn.fnamemodify(root, ":~") .. ": not running (the next command starts it)")
    end
  end
end

function M.check()
  check_neovim()
  check_options()
  local cmd = check_server()
  check_model()
  check_sandbox()
  if cmd then
    check_initialize(cmd)
  end
  check_connections()
end

return M
