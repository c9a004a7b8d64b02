"""agentls's benchmark harness (``make bench``; see docs/performance.md).

``python -m bench`` measures, in one run, what a user feels — first-delta
latency, submit → model request, stream throughput, cancel latency, startup —
plus fork cost, memory and latency under load, for agentls beside its
baselines: the raw ``openai`` SDK, a bare pygls server and Codex's app-server.
It writes ``results.md``, ``results.json`` and ``results.png``.

Modules: ``figures`` (the driver: one event loop, the fake model in it, each
contestant over stdio), ``agentls_server``/``codex``/``clients`` (the contestants
and their wire protocols), ``sdk_worker``/``core_worker``/``bare_pygls`` (the
in-process baselines, each in a fresh interpreter), ``assemble`` (targets),
``report`` (table and plot), ``profile`` (py-spy on the server during one
figure).
"""
