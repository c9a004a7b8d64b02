-- Sessions: the stored conversations of a workspace (agent/sessions), resumed
-- into a pane (agent/resume), deleted (agent/deleteSession).
local util = require("agentls.util")

local nn = util.nn
local M = {}

--- "just now", "5 min ago", "3 h ago", "2 d ago" (from an ISO 8601 UTC time).
function M.age(iso, now)
  local y, mo, d, h, mi, s = tostring(iso):match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if not y then
    return ""
  end
  -- os.time reads a table as local time: correct by the offset of UTC.
  local t = {
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(s),
  }
  local utc_now = now or os.time(os.date("!*t"))
  local seconds = math.max(0, utc_now - os.time(t))
  for _, unit in ipairs({ { "d", 86400 }, { "h", 3600 }, { "min", 60 } }) do
    if seconds >= unit[2] then
      return ("%d %s ago"):format(math.floor(seconds / unit[2]), unit[1])
    end
  end
  return "just now"
end

--- One line about a session: title · age · turns (· where it is open).
function M.describe(session, now)
  local turns = tonumber(session.turns) or 0
  local parts = {
    session.title or "(untitled)",
    M.age(session.updatedAt, now),
    nn(session.error) and "unreadable" or ("%d turn%s"):format(turns, turns == 1 and "" or "s"),
  }
  local pane = nn(session.pane)
  if pane then
    parts[#parts + 1] = "open in " .. pane
  end
  return table.concat(parts, " · ")
end

--- The workspace's sessions, most recently changed first.
--- @param conn agentls.Connection
--- @param callback fun(sessions: table[])
function M.list(conn, callback, opts, on_error)
  conn:request("agent/sessions", opts or vim.empty_dict(), function(result)
    callback(type(result) == "table" and nn(result.sessions) or {})
  end, on_error)
end

--- Asks which session (vim.ui.select), among those not open in a pane.
local function pick(conn, prompt, callback)
  M.list(conn, function(sessions)
    local choices = vim.tbl_filter(function(session)
      return nn(session.pane) == nil
    end, sessions)
    if #choices == 0 then
      util.notify("there is no stored session of this workspace to choose from")
      return
    end
    vim.ui.select(choices, {
      prompt = prompt,
      format_item = function(session)
        return M.describe(session)
      end,
    }, function(choice)
      if choice then
        callback(choice)
      end
    end)
  end)
end

--- Resumes a session in `pane`: `which` is an id, "last", or nil (asks).
function M.resume(conn, pane, which)
  local function go(session_id)
    conn:request("agent/resume", { sessionId = session_id, pane = pane }, function(result)
      util.notify(
        ("resumed “%s” in %s (%d turns)"):format(
          result.title or "",
          result.pane or pane,
          tonumber(result.turns) or 0
        )
      )
      local p = conn.panes[result.pane or pane]
      if p then
        conn:show(p)
      end
    end, function(err)
      util.error("could not resume the session: " .. util.describe_error(err))
    end)
  end
  if which and which ~= "" and which ~= "last" then
    M.list(conn, function(sessions)
      local found
      for _, session in ipairs(sessions) do
        if session.sessionId == which or (#which >= 8 and session.sessionId:sub(1, #which) == which) then
          found = found and "many" or session.sessionId
        end
      end
      if found == nil or found == "many" then
        util.error(("no session %q in this workspace (see :AgentSessions)"):format(which))
        return
      end
      go(found)
    end)
  elseif which == "last" then
    M.list(conn, function(sessions)
      for _, session in ipairs(sessions) do
        if nn(session.pane) == nil and not nn(session.error) then
          return go(session.sessionId)
        end
      end
      util.notify("there is no stored session of this workspace to resume")
    end)
  else
    pick(conn, "Resume which session? ", function(session)
      go(session.sessionId)
    end)
  end
end

--- :AgentSessions — the stored sessions, one line each.
function M.show(conn)
  M.list(conn, function(sessions)
    if #sessions == 0 then
      util.notify("no stored session for " .. vim.fn.fnamemodify(conn.root, ":~"))
      return
    end
    local lines = { "sessions of " .. vim.fn.fnamemodify(conn.root, ":~") .. " (:AgentResume ID|last):" }
    for _, session in ipairs(sessions) do
      lines[#lines + 1] = ("  %s  %s"):format(session.sessionId:sub(1, 12), M.describe(session))
    end
    util.notify(table.concat(lines, "\n"))
  end)
end

--- :AgentDeleteSession — asks which (or takes an id), confirms, deletes.
function M.delete(conn, which)
  local function go(session_id)
    conn:request("agent/deleteSession", { sessionId = session_id }, function()
      util.notify("deleted session " .. session_id:sub(1, 12))
    end, function(err)
      util.error("could not delete the session: " .. util.describe_error(err))
    end)
  end
  if which and which ~= "" then
    return go(which)
  end
  pick(conn, "Delete which session? ", function(session)
    vim.ui.select(
      { "Delete", "Keep" },
      { prompt = ("Delete “%s” for good? "):format(session.title) },
      function(answer)
        if answer == "Delete" then
          go(session.sessionId)
        end
      end
    )
  end)
end

--- After a server starts: say how to continue the last session, if main is empty.
function M.hint(conn)
  M.list(conn, function(sessions)
    local main = conn.panes.main
    if main and next(main.turns) ~= nil then
      return
    end
    for _, session in ipairs(sessions) do
      if nn(session.pane) == nil and not nn(session.error) then
        local turns = tonumber(session.turns) or 0
        util.notify(
          (":AgentResume last continues your last session “%s” (%s, %d turn%s)"):format(
            session.title,
            M.age(session.updatedAt),
            turns,
            turns == 1 and "" or "s"
          )
        )
        return
      end
    end
  end, { limit = 5 }, function() end)
end

return M
