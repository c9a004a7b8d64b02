-- Window sizes around a fork. Its transcript opens in a split of main's
-- window, which (with 'equalalways', the default) resizes every window of
-- the tab page; when the fork closes, the sizes from before it opened come
-- back instead of an equalized layout.
local api = vim.api

local M = {}

--- Remembers the sizes of the current tab page's windows (before `pane` opens).
--- @param pane agentls.Pane
function M.save(pane)
  pane.layout = {
    tab = api.nvim_get_current_tabpage(),
    count = #api.nvim_tabpage_list_wins(0),
    restore = vim.fn.winrestcmd(),
  }
end

--- Puts the sizes back once `pane`'s windows are closed, if the tab page has
--- the same number of windows as then (else the user changed the layout).
--- @param pane agentls.Pane
function M.restore(pane)
  local saved = pane.layout
  pane.layout = nil
  if not saved or api.nvim_get_current_tabpage() ~= saved.tab then
    return
  end
  if #api.nvim_tabpage_list_wins(0) ~= saved.count then
    return
  end
  pcall(vim.cmd, saved.restore)
end

return M
