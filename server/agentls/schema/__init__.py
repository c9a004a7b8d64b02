"""The wire described once: ``protocol.json`` (the source), the Python types
generated from it (``names``, ``wire``) and the generator (``generate``, run
by ``make schema``), which also makes the TypeScript and Lua types."""
