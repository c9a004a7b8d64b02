-- setup({ approval = "always" }) reaches the server: every command asks
-- first, here through window/showMessageRequest (Neovim's own handler shows
-- it with vim.ui.select). The first command is allowed, the second denied.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/harness.lua")

local asked = {}
vim.ui.select = function(items, opts, on_choice)
  local titles = vim.tbl_map(function(item)
    return opts.format_item and opts.format_item(item) or tostring(item)
  end, items)
  asked[#asked + 1] = { prompt = opts.prompt, items = titles }
  H.log("asked: " .. opts.prompt)
  local answer = #asked == 1 and "Allow once" or "Deny"
  for i, title in ipairs(titles) do
    if title == answer then
      return on_choice(items[i], i)
    end
  end
  H.fail("no " .. answer .. " in " .. vim.inspect(titles))
end

H.setup({ approval = "always" })
vim.cmd("AgentAsk run the two commands")
H.wait_text("✓ Completed")
H.check(#asked == 2, "two questions: " .. vim.inspect(asked))
H.check(asked[1].prompt:find("echo first-approved", 1, true), asked[1].prompt)
H.check(asked[2].prompt:find("touch denied.txt", 1, true), asked[2].prompt)
H.done({ asked = asked })
