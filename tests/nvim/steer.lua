-- :AgentSteer while the model's stream is held: admitted into the running
-- turn, visible in the transcript, applied at the next model request.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")
H.setup()

vim.cmd("AgentAsk write the release notes")
H.wait_text("### You · turn 1")
local pane = H.pane("main")
H.check(pane.running and pane.running.id == 1, "turn 1 runs")
H.step("started")

-- Completion offers file names inside a prompt.
local files = vim.fn.getcompletion("AgentSteer see src/a", "cmdline")
H.check(vim.tbl_contains(files, "src/app.py"), "file completion in a prompt: " .. vim.inspect(files))
local attach = vim.fn.getcompletion("AgentSteer see #file:src/a", "cmdline")
H.check(vim.deep_equal(attach, { "#file:src/app.py" }), "attachment completion: " .. vim.inspect(attach))

vim.cmd("AgentSteer also mention the tests")
H.wait(function()
  return H.has_message("steer admitted into turn 1")
end, "the steer to be admitted")
H.wait_text("↪ **Steer**: also mention the tests · waiting for the model")
H.step("steered")

H.wait_text("↪ **Steer**: also mention the tests · sent to the model")
H.wait_text("Answer with the steer.")
H.wait_text("✓ Completed")
local text = H.text()
H.check(select(2, text:gsub("### You", "")) == 1, "one turn, not a second one:\n" .. text)
H.done()
