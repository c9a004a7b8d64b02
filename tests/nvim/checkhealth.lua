-- :checkhealth agentls with the default server command (agentls on
-- $PATH); and the documentation covers every command and option.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup({ cmd = false })

vim.cmd("checkhealth agentls")
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
H.check(report:find("agentls: initialize", 1, true), "the report:\n" .. report)
vim.cmd("bwipeout!")

-- The model probe (the same function :checkhealth uses): a base URL where
-- nothing listens, one that takes the connection and never answers (the
-- 3 s timeout), and a request the API refuses (no key).
local probe = require("agentls.probe")
local function found(opts)
  return vim.tbl_map(function(line)
    return { level = line[1], text = line[2] }
  end, probe.check(vim.tbl_extend("force", require("agentls.config").options, opts)))
end
local unreachable = found({ base_url = assert(os.getenv("AGENTLS_CLOSED_URL")) })
local silent = found({ base_url = assert(os.getenv("AGENTLS_SILENT_URL")) })
local refused = found({ cmd_env = { OPENAI_API_KEY = "" } })

-- The vimdoc: its tags build (a copy, so the plugin directory gets no tags
-- file), and :help finds every command and option.
local plugin = os.getenv("AGENTLS_PLUGIN")
local docs = vim.fn.tempname()
vim.fn.mkdir(docs .. "/doc", "p")
vim.fn.writefile(vim.fn.readfile(plugin .. "/doc/agentls.txt"), docs .. "/doc/agentls.txt")
vim.cmd("helptags " .. vim.fn.fnameescape(docs .. "/doc"))
vim.opt.rtp:append(docs)
local readme = table.concat(vim.fn.readfile(plugin .. "/README.md"), "\n")
local vimdoc = table.concat(vim.fn.readfile(plugin .. "/doc/agentls.txt"), "\n")
local function help(tag)
  local ok, err = pcall(vim.cmd.help, tag)
  H.check(ok, ":help " .. tag .. ": " .. tostring(err))
  vim.cmd("helpclose")
end
help("agentls")
for name in pairs(require("agentls.commands").specs) do
  help(":" .. name)
  H.check(readme:find(":" .. name, 1, true), "the README shows :" .. name)
end
local defaults = require("agentls.config").defaults
for key, value in pairs(defaults) do
  H.check(vimdoc:find(key, 1, true) and readme:find(key, 1, true), "option " .. key .. " is documented")
  if type(value) == "table" and not vim.islist(value) then
    for sub in pairs(value) do
      H.check(vimdoc:find(sub, 1, true) and readme:find(sub, 1, true), ("option %s.%s is documented"):format(key, sub))
    end
  end
end
for _, action in pairs(require("agentls.keymaps").actions) do
  local plug = ("<Plug>(%s)"):format(action[1])
  H.check(vimdoc:find(plug, 1, true) and readme:find(plug, 1, true), plug .. " is documented")
end
H.done({ report = report, unreachable = unreachable, silent = silent, refused = refused })
