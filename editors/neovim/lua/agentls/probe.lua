-- The model probe of :checkhealth agentls: a real `GET {base URL}/models`
-- (what every OpenAI-compatible API answers) with a 3 s timeout, through
-- curl. It tells "unreachable" from "refused the key" from "OK" before the
-- first prompt does. The API key goes to curl on its stdin (a config
-- "header" line), never on its command line, and nothing shown contains it:
-- an error is reported by its HTTP status and the API's error code only.
local config = require("agentls.config")

local M = {}

M.TIMEOUT_MS = 3000
M.DEFAULT_BASE_URL = "https://api.openai.com/v1" -- the openai SDK's, the server's too

--- The base URL and key the server would use (options, cmd_env, environment).
--- @return string base_url, string|nil key, boolean configured (a key or a base URL is set)
function M.target(opts)
  opts = opts or config.options
  local env = opts.cmd_env or {}
  local function pick(...)
    -- The first value that is set ("" counts: it clears what follows).
    for i = 1, select("#", ...) do
      local value = select(i, ...)
      if value ~= nil then
        return value ~= "" and value or nil
      end
    end
  end
  local key = pick(env.OPENAI_API_KEY, vim.env.OPENAI_API_KEY)
  local base = pick(opts.base_url, env.OPENAI_BASE_URL, vim.env.OPENAI_BASE_URL)
  return (base or M.DEFAULT_BASE_URL):gsub("/+$", ""), key, key ~= nil or base ~= nil
end

--- A URL as it may be shown: without a user or password in it.
function M.shown(url)
  return (url:gsub("^(%a[%w+.-]*://)[^/@]*@", "%1"))
end

local function quoted(value)
  return '"' .. value:gsub("\\", "\\\\"):gsub('"', '\\"') .. '"'
end

--- GET {base_url}/models. Returns {status = HTTP status} with the parsed
--- `body` (or nil), or {err = why it could not be reached}; `ms` either way.
--- @return {status?: integer, body?: table, err?: string, ms: integer}
function M.request(base_url, key, timeout_ms)
  timeout_ms = timeout_ms or M.TIMEOUT_MS
  if vim.fn.executable("curl") ~= 1 then
    return { err = "curl is not installed", ms = 0, no_curl = true }
  end
  local seconds = ("%.1f"):format(timeout_ms / 1000)
  local lines = {
    "url = " .. quoted(base_url .. "/models"),
    "silent",
    "show-error",
    "connect-timeout = " .. seconds,
    "max-time = " .. seconds,
    'write-out = "\\n%{http_code}"',
  }
  if key then
    lines[#lines + 1] = "header = " .. quoted("Authorization: Bearer " .. key)
  end
  local started = vim.uv.hrtime()
  local ok, result = pcall(function()
    return vim
      .system({ "curl", "--config", "-" }, { stdin = table.concat(lines, "\n") .. "\n", text = true })
      :wait(timeout_ms + 2000)
  end)
  local ms = math.floor((vim.uv.hrtime() - started) / 1e6)
  if not ok then
    return { err = tostring(result), ms = ms }
  end
  local out = result.stdout or ""
  local body, code = out:match("^(.*)\n(%d%d%d)$")
  if result.code ~= 0 or not code or code == "000" then
    local why = vim.trim((result.stderr or ""):gsub("^curl: %(%d+%) ", ""))
    if result.signal ~= 0 or result.code == 28 or why == "" then -- 28: curl's timeout
      why = ("no answer within %.0f s"):format(timeout_ms / 1000)
    end
    return { err = why, ms = ms }
  end
  local parsed_ok, parsed = pcall(vim.json.decode, body)
  return { status = tonumber(code), body = parsed_ok and type(parsed) == "table" and parsed or nil, ms = ms }
end

local function api_code(body)
  local err = body and type(body.error) == "table" and body.error or nil
  local code = err and err.code
  return type(code) == "string" and (", " .. code) or ""
end

--- What the probe found, as lines for :checkhealth: {level, text, advice?}
--- with level "ok", "info", "warn" or "error".
--- @param opts? table the options (default: the current ones)
--- @return {[1]: string, [2]: string, [3]: string[]|nil}[]
function M.check(opts)
  opts = opts or config.options
  local base, key, configured = M.target(opts)
  if not configured then
    return {} -- the health check already says no model is configured
  end
  local url = M.shown(base)
  local r = M.request(base, key)
  if r.no_curl then
    return { { "warn", "curl is not installed: the model API was not probed", { "install curl" } } }
  end
  if r.err then
    return {
      {
        "error",
        ("the model API at %s is unreachable: %s"):format(url, r.err),
        {
          "check `base_url` (or $OPENAI_BASE_URL): it is the API's root, e.g. https://api.openai.com/v1",
          "check your network, proxy (https_proxy) and that the server is running",
        },
      },
    }
  end
  local status = r.status
  if status == 401 or status == 403 then
    return {
      {
        "error",
        ("the model API at %s refused %s (HTTP %d%s)"):format(
          url,
          key and "the API key" or "a request without an API key",
          status,
          api_code(r.body)
        ),
        {
          key and "OPENAI_API_KEY holds a key this API does not accept: export the right one before starting Neovim"
            or "export OPENAI_API_KEY before starting Neovim (or set it in `cmd_env`)",
        },
      },
    }
  elseif status == 404 then
    return {
      {
        "warn",
        ("%s answered GET /models with HTTP 404: is it the API's root (…/v1)?"):format(url),
        { "some Responses-compatible servers do not list models; if prompts work, all is well" },
      },
    }
  elseif status < 200 or status >= 300 then
    return { { "warn", ("%s answered GET /models with HTTP %d%s"):format(url, status, api_code(r.body)) } }
  end
  local data = r.body and type(r.body.data) == "table" and r.body.data or {}
  local ids = {}
  for _, entry in ipairs(data) do
    if type(entry) == "table" and type(entry.id) == "string" then
      ids[entry.id] = true
    end
  end
  local found = {
    {
      "ok",
      ("the model API at %s answered in %d ms (HTTP %d, %d model%s listed)"):format(
        url,
        r.ms,
        status,
        #data,
        #data == 1 and "" or "s"
      ),
    },
  }
  if opts.model and #data > 0 then
    if ids[opts.model] then
      found[#found + 1] = { "ok", ("model %s is listed"):format(opts.model) }
    else
      found[#found + 1] = {
        "warn",
        ("model %s is not among the %d models the API lists"):format(opts.model, #data),
        { "check the `model` option for a typo" },
      }
    end
  end
  return found
end

return M
