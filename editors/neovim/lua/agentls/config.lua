-- Options: defaults, validation, and the server command they lead to.
local M = {}

M.efforts = { "none", "minimal", "low", "medium", "high", "xhigh" }
M.approvals = { "never", "on-request", "always" }
M.sandboxes = { "workspace-write", "read-only", "off" }

--- @class agentls.Options
M.defaults = {
  -- How to start the server. `cmd` wins; else `python -m agentls serve` when
  -- `python` is set; else `agentls serve` found on $PATH.
  cmd = nil, --- @type string[]|nil
  python = nil, --- @type string|nil
  cmd_env = nil, --- @type table<string,string>|nil extra environment for the server
  log_level = nil, --- @type "DEBUG"|"INFO"|"WARNING"|"ERROR"|nil server log level (to the LSP log)
  -- Sent as initializationOptions. nil lets the server decide (its own
  -- defaults, $AGENTLS_MODEL, $OPENAI_BASE_URL). The API key is never an
  -- option: the server reads $OPENAI_API_KEY from its environment.
  model = nil, --- @type string|nil
  base_url = nil, --- @type string|nil
  effort = nil, --- @type "none"|"minimal"|"low"|"medium"|"high"|"xhigh"|nil
  fast_mode = nil, --- @type boolean|nil
  -- When a tool call must be allowed first: "on-request" (what the sandbox
  -- does not confine: commands the agent wants to run outside it, and
  -- without a sandbox every command and patch), "always" or "never"; nil:
  -- the server's default ("on-request").
  approval = nil, --- @type "never"|"on-request"|"always"|nil
  -- Where commands run: "workspace-write" (the sandbox: they may write only
  -- the workspace and a private /tmp), "read-only" or "off"; nil: the
  -- server's default ("workspace-write" where the sandbox works).
  sandbox = nil, --- @type "workspace-write"|"read-only"|"off"|nil
  network = nil, --- @type boolean|nil let sandboxed commands use the network (default false)
  -- Review mode: every patch waits for you in a diff view (accept/reject);
  -- nil: the server's default (off). `:AgentReview on|off` changes it.
  review = nil, --- @type boolean|nil
  idle_timeout = nil, --- @type number|nil seconds of model silence before a stream counts as stalled
  -- MCP servers whose tools the agent may use, by name: { command = "…",
  -- args = { … }, env = { … } } (stdio) or { type = "http", url = "…",
  -- headers = { … } }. Sent as initializationOptions.mcpServers; the server
  -- also reads ~/.config/agentls/mcp.json and the project's .mcp.json.
  mcp_servers = nil, --- @type table<string, table>|nil
  -- Offer the model OpenAI's hosted web search (nil: the server's default, off).
  web_search = nil, --- @type boolean|nil
  -- The model's context window in tokens (nil: the server knows OpenAI's models).
  context_window = nil, --- @type integer|nil
  -- Compact when the next request would fill more than this share of the
  -- window; 0 turns it off (nil: the server's default, 0.85).
  auto_compact = nil, --- @type number|nil
  -- Stored sessions kept for the workspace (the least recently changed go
  -- first); 0 stores none; nil: the server's default (200).
  session_retention = nil, --- @type integer|nil
  -- One server per workspace root. Each entry is a marker name or a list of
  -- names of equal priority; the first entry that finds a root wins; else the
  -- current directory.
  root_markers = {
    { ".git", ".hg", ".jj", ".svn" },
    { "pyproject.toml", "package.json", "Cargo.toml", "go.mod", "Makefile" },
  },
  root_dir = nil, --- @type fun(bufnr: integer): string|nil overrides root_markers
  context = {
    documents = false, -- also send the files open in the workspace as context.documents
  },
  edits = {
    save = true, -- write a buffer after the agent edited it (never one you had modified)
    reload = true, -- reload (:checktime) buffers whose files a command changed, and say so
  },
  transcript = {
    position = "right", -- "right" | "left" | "top" | "bottom": where the main transcript opens
    size = 0.4, -- below 1: a fraction of the editor; else columns (left/right) or lines
    fork = "vertical", -- the fork opens beside main: "vertical" (side by side) or "horizontal"
    open_on_ask = true, -- show the transcript when a prompt is sent
    focus = false, -- move the cursor into the transcript when it opens
    follow = true, -- keep the view at the end while the answer streams (unless you moved away)
    fold_output = true, -- fold tool output and reasoning under their one-line entries
    render_interval_ms = 30, -- streamed text is drawn in batches at most this often
  },
  compose = {
    height = 8, -- lines of the compose window (:AgentAsk, :AgentSteer without an argument)
  },
  -- Global keymaps are opt-in (so they clash with no other plugin): set
  -- `prefix` (e.g. "<leader>a") for all of them (`<prefix>a` ask, `<prefix>s`
  -- steer, …: M.keymap_suffixes), and/or give an action its own key
  -- (ask = "<M-a>"), or false to leave it out.
  keymaps = {
    prefix = false, --- @type string|false
    transcript_cancel = "<C-c>", -- in a transcript buffer
    transcript_stop_tool = "x", -- in a transcript buffer, on a running command: stop just it
    transcript_close = "q", -- in a transcript buffer: hide its window
    review_accept = "A", -- in a review diff view: accept the patch
    review_reject = "R", -- in a review diff view: reject it, with a reason the agent reads
  },
  statusline = {
    icons = { running = "⟳", cancelling = "⏹", idle = "" },
    idle = "", -- text shown when no turn runs ("" hides the component)
  },
}

-- The global keymaps: action -> its key after `keymaps.prefix`.
M.keymap_suffixes = {
  ask = "a", -- normal: open the compose buffer; visual: ask about the selection
  steer = "s",
  cancel = "c",
  fork = "f",
  close_pane = "x",
  effort = "t",
  fast = "F",
  new = "n",
  compact = "k",
  toggle = "o",
}

M.options = vim.deepcopy(M.defaults)
--- What the last setup() left out (unknown keys, invalid values), for :checkhealth.
--- @type string[]
M.problems = {}

-- --- validation --------------------------------------------------------------------------
-- Each check returns nil when the value is good, else what was expected.

local function one_of(values)
  return function(v)
    if not vim.tbl_contains(values, v) then
      return "one of " .. table.concat(vim.tbl_map(vim.inspect, values), ", ")
    end
  end
end

local function of_type(t)
  return function(v)
    if type(v) ~= t then
      return "a " .. t
    end
  end
end

local function is_string_list(v)
  if type(v) ~= "table" or not vim.islist(v) or #v == 0 then
    return false
  end
  for _, item in ipairs(v) do
    if type(item) ~= "string" or item == "" then
      return false
    end
  end
  return true
end

local function non_empty_string(v)
  if type(v) ~= "string" or v == "" then
    return "a non-empty string"
  end
end

local boolean = of_type("boolean")

local function key_or_false(v)
  if v ~= false and non_empty_string(v) then
    return "a key (string) or false"
  end
end

-- The shape of the options: a check per key; a table for a nested table of
-- options. Every key of the defaults is here, and only those.
local schema = {
  cmd = function(v)
    if type(v) ~= "string" and not is_string_list(v) then
      return "a list of strings (the command and its arguments)"
    end
  end,
  python = non_empty_string,
  cmd_env = function(v)
    if type(v) ~= "table" then
      return "a table of environment variables"
    end
    for k, value in pairs(v) do
      if type(k) ~= "string" or (type(value) ~= "string" and type(value) ~= "number") then
        return "a table of NAME = string entries"
      end
    end
  end,
  log_level = one_of({ "DEBUG", "INFO", "WARNING", "ERROR" }),
  model = non_empty_string,
  base_url = non_empty_string,
  effort = one_of(M.efforts),
  fast_mode = boolean,
  approval = one_of(M.approvals),
  sandbox = one_of(M.sandboxes),
  network = boolean,
  review = boolean,
  idle_timeout = function(v)
    if type(v) ~= "number" or v <= 0 then
      return "a positive number of seconds"
    end
  end,
  mcp_servers = function(v)
    if type(v) ~= "table" or (next(v) ~= nil and vim.islist(v)) then
      return "a table of NAME = { command = …, args = {…} } or { type = 'http', url = … }"
    end
    for name, server in pairs(v) do
      if type(name) ~= "string" or type(server) ~= "table" then
        return "a table of NAME = { command = …, args = {…} } or { type = 'http', url = … }"
      end
    end
  end,
  web_search = boolean,
  context_window = function(v)
    if type(v) ~= "number" or v < 1024 or v % 1 ~= 0 then
      return "a whole number of tokens, at least 1024"
    end
  end,
  auto_compact = function(v)
    if type(v) ~= "number" or v < 0 or v >= 1 then
      return "a number from 0 (off) to below 1"
    end
  end,
  session_retention = function(v)
    if type(v) ~= "number" or v < 0 or v % 1 ~= 0 then
      return "a whole number of sessions (0 or more)"
    end
  end,
  root_markers = function(v)
    if type(v) ~= "table" or not vim.islist(v) then
      return "a list of marker names or lists of names"
    end
    for _, entry in ipairs(v) do
      if non_empty_string(entry) and not is_string_list(entry) then
        return "a list of marker names or lists of names"
      end
    end
  end,
  root_dir = of_type("function"),
  context = { documents = boolean },
  edits = { save = boolean, reload = boolean },
  transcript = {
    position = one_of({ "right", "left", "top", "bottom" }),
    size = function(v)
      if type(v) ~= "number" or v <= 0 then
        return "a positive number"
      end
    end,
    fork = one_of({ "vertical", "horizontal" }),
    open_on_ask = boolean,
    focus = boolean,
    follow = boolean,
    fold_output = boolean,
    render_interval_ms = function(v)
      if type(v) ~= "number" or v < 0 or v % 1 ~= 0 then
        return "a whole number of milliseconds"
      end
    end,
  },
  compose = {
    height = function(v)
      if type(v) ~= "number" or v < 1 or v % 1 ~= 0 then
        return "a whole number of lines, at least 1"
      end
    end,
  },
  keymaps = vim.tbl_map(function()
    return key_or_false
  end, vim.tbl_extend("error", M.defaults.keymaps, M.keymap_suffixes)),
  statusline = {
    icons = { running = of_type("string"), cancelling = of_type("string"), idle = of_type("string") },
    idle = of_type("string"),
  },
}

--- Checks `opts` against `shape`; returns a copy without the bad entries, and
--- adds a sentence per bad entry to `problems`.
local function clean(opts, shape, prefix, problems)
  local good = {}
  for key, value in pairs(opts) do
    local name = prefix .. tostring(key)
    local check = shape[key]
    if check == nil then
      problems[#problems + 1] = ("unknown option `%s`"):format(name)
    elseif type(check) == "table" then
      if type(value) == "table" and (next(value) == nil or not vim.islist(value)) then
        good[key] = clean(value, check, name .. ".", problems)
      elseif key == "keymaps" and value == false then
        good[key] = false
      else
        problems[#problems + 1] = ("option `%s`: expected a table%s, got %s"):format(
          name,
          key == "keymaps" and " or false" or "",
          vim.inspect(value)
        )
      end
    else
      local expected = check(value)
      if expected then
        problems[#problems + 1] = ("option `%s`: expected %s, got %s"):format(name, expected, vim.inspect(value))
      else
        good[key] = value
      end
    end
  end
  return good
end

--- The options of `opts` that are valid, and a sentence per invalid or unknown one.
--- @return table good, string[] problems
function M.validate(opts)
  local problems = {}
  if type(opts) ~= "table" then
    return {}, { ("setup() expects a table of options, got %s"):format(vim.inspect(opts)) }
  end
  local good = clean(opts, schema, "", problems)
  table.sort(problems)
  return good, problems
end

--- Merge `opts` over the defaults (keymaps = false disables every keymap).
--- Every unknown key and invalid value is reported (one ERROR message naming
--- each) and left out: the rest of the options still apply.
--- @param opts agentls.Options|nil
--- @return table options, string[] problems
function M.set(opts)
  local good, problems = M.validate(opts or {})
  if #problems > 0 then
    require("agentls.util").error("setup(): " .. table.concat(problems, "; "))
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), good)
  if good.keymaps == false then
    merged.keymaps = false
  end
  -- Lists replace, they do not merge index by index.
  if good.root_markers then
    merged.root_markers = good.root_markers
  end
  if good.cmd then
    merged.cmd = type(good.cmd) == "string" and { good.cmd } or good.cmd
  end
  M.options = merged
  M.problems = problems
  return merged, problems
end

--- The command that starts the server, or nil and why not.
--- @return string[]|nil cmd, string|nil err
function M.server_cmd(opts)
  opts = opts or M.options
  local cmd
  if opts.cmd then
    cmd = vim.deepcopy(opts.cmd)
    if vim.fn.executable(cmd[1]) ~= 1 then
      return nil, ("the server command %q is not executable"):format(cmd[1])
    end
  elseif opts.python then
    if vim.fn.executable(opts.python) ~= 1 then
      return nil, ("python %q is not executable"):format(opts.python)
    end
    cmd = { opts.python, "-m", "agentls", "serve" }
  elseif vim.fn.executable("agentls") == 1 then
    cmd = { "agentls", "serve" }
  else
    return nil,
      "`agentls` was not found on $PATH: install the server (`pip install .` in a clone of "
        .. "the agentls repository, see :help agentls-requirements) "
        .. "or set `cmd` or `python` in require('agentls').setup()"
  end
  if opts.log_level then
    vim.list_extend(cmd, { "--log-level", opts.log_level })
  end
  return cmd
end

--- The command that prints the server's version, derived from the server command.
--- @return string[]|nil
function M.version_cmd(cmd)
  for i, arg in ipairs(cmd) do
    if arg == "serve" then
      local out = vim.list_slice(cmd, 1, i - 1)
      out[#out + 1] = "--version"
      return out
    end
  end
  return nil
end

--- initializationOptions for a server on `root` (settings override options).
function M.init_options(root, settings, opts)
  opts = opts or M.options
  settings = settings or {}
  local init = { workspace = root }
  init.model = opts.model
  init.baseUrl = opts.base_url
  init.effort = settings.effort or opts.effort
  local fast = settings.fast
  if fast == nil then
    fast = opts.fast_mode
  end
  init.fastMode = fast
  init.approval = opts.approval
  init.sandbox = opts.sandbox
  init.network = opts.network
  init.review = settings.review
  if init.review == nil then
    init.review = opts.review
  end
  init.idleTimeout = opts.idle_timeout
  init.mcpServers = M.mcp_servers(opts.mcp_servers)
  init.webSearch = opts.web_search
  init.contextWindow = opts.context_window
  init.autoCompact = opts.auto_compact
  init.sessionRetention = opts.session_retention
  return init
end

--- `mcp_servers` as JSON objects: an empty Lua table would be sent as `[]`.
function M.mcp_servers(servers)
  if not servers or next(servers) == nil then
    return nil
  end
  local out = {}
  for name, server in pairs(servers) do
    local entry = vim.deepcopy(server)
    for _, key in ipairs({ "env", "headers" }) do
      if type(entry[key]) == "table" and next(entry[key]) == nil then
        entry[key] = nil
      end
    end
    out[name] = entry
  end
  return out
end

return M
