-- The scene of docs/images/neovim-transcript.png: tests/nvim_screenshot.py
-- runs `nvim -u` this file in a real terminal (tmux), against the real server
-- and `agentls demo`'s scripted model, and captures the screen once the
-- scene is set. Not a test: the tests are tests/nvim/*.lua without this one.
-- Environment: AGENTLS_PLUGIN, AGENTLS_SERVER (JSON list), AGENTLS_BASE_URL,
-- AGENTLS_PROMPT (what the user asks), AGENTLS_WAIT_MS.
local api = vim.api
local wait_ms = tonumber(os.getenv("AGENTLS_WAIT_MS")) or 60000

vim.opt.rtp:prepend(assert(os.getenv("AGENTLS_PLUGIN")))
vim.g.loaded_python3_provider = 0
vim.g.mapleader = " "
vim.o.termguicolors = true
vim.o.number = true
vim.o.signcolumn = "yes"
vim.o.showmode = false
vim.o.shortmess = vim.o.shortmess .. "I"
vim.cmd("runtime plugin/agentls.lua")
require("agentls").setup({
  cmd = vim.json.decode(assert(os.getenv("AGENTLS_SERVER"))),
  base_url = assert(os.getenv("AGENTLS_BASE_URL")),
  model = "scripted-demo",
  -- The scripted commands run on a throwaway copy of the example: nothing to ask.
  approval = "never",
  session_retention = 0,
  keymaps = { prefix = "<leader>a" },
  transcript = { size = 0.46 },
})
vim.o.statusline = " %f%m%=%{v:lua.require'agentls'.statusline()}  %{v:lua.require'agentls'.context()} "

local function keys(text)
  api.nvim_feedkeys(vim.keycode(text), "mx", false)
end

local function transcript_text()
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(buf):match("^agentls://.*/main$") then
      return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
    end
  end
  return ""
end

--- Calls `done` once `ready()` holds, polling on a timer (the UI keeps drawing).
local function when(ready, done)
  local started = vim.uv.now()
  local timer = assert(vim.uv.new_timer())
  timer:start(
    50,
    50,
    vim.schedule_wrap(function()
      if ready() then
        timer:stop()
        timer:close()
        done()
      elseif vim.uv.now() - started > wait_ms then
        timer:stop()
        timer:close()
        vim.notify("screenshot scene: timed out", vim.log.levels.ERROR)
      end
    end)
  )
end

api.nvim_create_autocmd("VimEnter", {
  once = true,
  callback = vim.schedule_wrap(function()
    -- Ask from the compose buffer (the ask keymap), with the buffer attached.
    keys("<leader>aa" .. assert(os.getenv("AGENTLS_PROMPT")) .. "<CR>#buffer<Esc><CR>")
    when(function()
      return transcript_text():find("✓ Completed", 1, true) ~= nil
    end, function()
      -- The next prompt, being written: the compose buffer and its hints.
      vim.cmd("wincmd t")
      vim.cmd("checktime") -- the fix is on disk
      api.nvim_win_set_cursor(0, { 11, 0 })
      keys("V9j<leader>aaAdd a test for an empty list: what should it raise?<CR>Then check #diagnostics<Esc>")
      -- As much of the transcript as fits: its last line at the bottom.
      for _, win in ipairs(api.nvim_list_wins()) do
        if api.nvim_buf_get_name(api.nvim_win_get_buf(win)):match("/main$") then
          vim.fn.win_execute(win, "normal! Gzb")
        end
      end
      vim.cmd("redraw")
    end)
  end),
})
