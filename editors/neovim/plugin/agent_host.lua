-- agent-host: defines the :Agent* commands and the <Plug>(Agent*) mappings.
-- Both are cheap: the plugin's modules load when one of them is first used.
-- Options and default keymaps come from require("agent_host").setup({...}).
if vim.g.loaded_agent_host then
  return
end
vim.g.loaded_agent_host = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify_once("agent-host needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

require("agent_host.commands").create()
require("agent_host.keymaps").plugs()
