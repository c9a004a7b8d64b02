"""agentls: a coding agent that lives inside the editor.

The package is layered (see docs/architecture.md): ``protocol`` and ``server``
speak JSON-RPC; ``worker`` owns panes; ``agent`` owns one conversation;
``model`` and ``tools`` do the work. Imports only point down that list.
"""

__version__ = "0.1.0"
