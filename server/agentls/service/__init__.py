"""The service: the agent as a transport-free API — open and close panes,
submit, steer, cancel, fork, resume, compact, change settings — whose events
are typed objects. It knows no JSON-RPC: each face (``agentls.lsp``, and ACP
next) is a thin translation onto it, and implements the small ``Editor``
port (``editor.py``) for what the service needs from the editor."""
