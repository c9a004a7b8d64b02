"""Model Context Protocol servers as tools.

The user's MCP servers (``initializationOptions.mcpServers``, their
``~/.config/agentls/mcp.json``, and a project's ``.mcp.json`` once they allow
each of its servers) start in the background after ``initialize``; their
tools are offered to the model as ``mcp__NAME__TOOL``.

Layout: ``config`` reads the configuration, ``consent`` remembers what the
user allowed per project, ``names`` turns MCP tool names into function names,
``manager`` owns the servers (``ToolSource`` of the tool box), ``runner``
runs one server with the official ``mcp`` SDK, ``results`` turns a tool's
result into the call's output, ``tool`` is the adapter the agent calls.

Only ``runner`` and ``results`` import the SDK, and the manager imports them
on a worker thread once a server is configured: answering ``initialize`` and
a server with no MCP configuration never pay for it. Nothing here imports
pygls, lsprotocol or the server layer: asking the user goes through
``consent.ConsentAsker``, which the server layer implements.
"""
