-- agentls: defines the :Agent* commands and the <Plug>(Agent*) mappings.
-- Both are cheap: the plugin's modules load when one of them is first used.
-- Options and default keymaps come from require("agentls").setup({...}).
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.notify_once("agentls needs Neovim 0.10 or newer", vim.log.levels.ERROR)
  return
end

require("agentls.commands").create()
require("agentls.keymaps").plugs()
