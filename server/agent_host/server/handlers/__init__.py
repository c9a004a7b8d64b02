"""Request handlers, one module per group. Each parses, delegates to the
session/worker, and translates the answer to wire form — nothing more."""
