"""The session store: every pane's conversation on disk, listed, resumed, deleted.

A *session* is one pane's conversation as stored (docs/sessions.md). This
package knows agents' histories (it implements ``agent.recorder.Recorder``),
not LSP: the server asks it to list, resume and delete sessions, and hands
the agents it creates a recorder from it.
"""
