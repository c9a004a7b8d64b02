-- Options: defaults, validation, and the server command they lead to.
local M = {}

M.efforts = { "none", "minimal", "low", "medium", "high", "xhigh" }

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
  keymaps = {
    ask = "<leader>aa", -- normal: prompt for a question; visual: ask about the selection
    steer = "<leader>as",
    cancel = "<leader>ac",
    fork = "<leader>af",
    close = "<leader>ax",
    thinking = "<leader>at",
    fast = "<leader>aF",
    new = "<leader>an",
    toggle = "<leader>ao",
    transcript_cancel = "<C-c>", -- in a transcript buffer
    transcript_close = "q", -- in a transcript buffer: hide its window
  },
  statusline = {
    icons = { running = "⟳", cancelling = "⏹", idle = "" },
    idle = "", -- text shown when no turn runs ("" hides the component)
  },
}

M.options = vim.deepcopy(M.defaults)

local function validate(name, value, types, optional, hint)
  if value == nil and optional then
    return
  end
  if type(types) == "function" then
    if not types(value) then
      error(("agentls: option %s: expected %s, got %s"):format(name, hint, vim.inspect(value)), 0)
    end
    return
  end
  types = type(types) == "table" and types or { types }
  if not vim.tbl_contains(types, type(value)) then
    error(("agentls: option %s: expected %s, got %s"):format(name, table.concat(types, " or "), type(value)), 0)
  end
end

local function check(opts)
  validate("cmd", opts.cmd, "table", true)
  validate("python", opts.python, "string", true)
  validate("cmd_env", opts.cmd_env, "table", true)
  validate("log_level", opts.log_level, "string", true)
  validate("model", opts.model, "string", true)
  validate("base_url", opts.base_url, "string", true)
  validate("effort", opts.effort, function(v)
    return vim.tbl_contains(M.efforts, v)
  end, true, "one of " .. table.concat(M.efforts, ", "))
  validate("fast_mode", opts.fast_mode, "boolean", true)
  validate("root_markers", opts.root_markers, "table")
  validate("root_dir", opts.root_dir, "function", true)
  validate("context", opts.context, "table")
  validate("transcript", opts.transcript, "table")
  validate("keymaps", opts.keymaps, { "table", "boolean" })
  validate("statusline", opts.statusline, "table")
  local position = opts.transcript.position
  if not vim.tbl_contains({ "right", "left", "top", "bottom" }, position) then
    error("agentls: option transcript.position: expected right, left, top or bottom", 0)
  end
  if not vim.tbl_contains({ "vertical", "horizontal" }, opts.transcript.fork) then
    error("agentls: option transcript.fork: expected vertical or horizontal", 0)
  end
end

--- Merge `opts` over the defaults (keymaps = false disables every keymap).
--- @param opts agentls.Options|nil
function M.set(opts)
  opts = opts or {}
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.keymaps == false then
    merged.keymaps = false
  end
  -- Lists replace, they do not merge index by index.
  if opts.root_markers then
    merged.root_markers = opts.root_markers
  end
  if opts.cmd then
    merged.cmd = type(opts.cmd) == "string" and { opts.cmd } or opts.cmd
  end
  check(merged)
  M.options = merged
  return merged
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
      "`agentls` was not found on $PATH: install the server (pip install agentls) "
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
  return init
end

return M
