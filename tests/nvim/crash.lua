-- The server dies in the middle of a turn: the user is told, the turn is
-- marked lost, and the next :AgentAsk starts a new server that works.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

vim.cmd("AgentAsk first")
H.wait_text("### You · turn 1")
H.step("asked") -- pytest lets us go on once the turn's request reached the model
local conn = H.connection()
local first_client = conn.client_id
local children = vim.api.nvim_get_proc_children(vim.fn.getpid())
H.check(#children == 1, "one child process: the server " .. vim.inspect(children))
local pid = children[1]
vim.uv.kill(pid, "sigkill")
H.wait(function()
  return not H.pid_alive(pid)
end, "the server to die")

H.wait(function()
  return H.has_message("stopped unexpectedly", vim.log.levels.ERROR)
end, "the crash to be reported")
H.check(H.has_message("signal 9"), "the message says how it ended")
local log = vim.fn.fnamemodify(vim.lsp.log.get_filename(), ":~")
H.check(H.has_message(vim.pesc("LSP log (" .. log .. ")")), "the message says where the server's log is")
H.wait_text("✗ Lost")
H.check(conn.client_id == nil, "no client any more")
H.check(require("agentls").statusline() == "", "nothing runs")
H.step("killed", { pid = pid })

vim.cmd("AgentAsk after the crash")
H.wait_text("Back after the crash.")
H.wait_text("✓ Completed")
H.check(conn.client_id and conn.client_id ~= first_client, "a new client")
H.check(conn.starts == 2, "started twice")
H.done()
