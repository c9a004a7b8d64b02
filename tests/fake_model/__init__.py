"""The fake Responses API (``agentls.testing.fake_model``), driven through the real SDK."""
