"""Edits through the editor (issue 16), side by side in one run:

* ``apply_patch`` of a 10-hunk patch on a 5,000-line open file, on two
  servers: one whose client takes ``workspace/applyEdit`` (it applies the
  edit to its document, tells the server with ``didChange`` and saves the
  file before it answers, as the VS Code extension does), one whose client
  cannot (the patch is written on disk; the client then reloads the file, as
  Neovim's ``checktime`` does, outside the measurement). Round trip: the fake
  finished sending the response that holds the call → the request carrying
  the tool's output reaches the fake; and the client's ``tool.started`` →
  ``tool.finished``. Repetitions alternate between the servers, and which
  goes first swaps each time.
* Memory of open documents: the server's RSS before and after the client
  opens 200 documents (each a little different from the file on disk, as
  unsaved buffers are), synchronised by a ``read_file`` turn that must see
  the last one's unsaved text.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from agentls.testing.fake_model import Reply
from agentls.testing.text_edits import apply_text_edits
from bench import procs
from bench.agentls_server import AgentlsServer
from bench.fakehub import tag

if TYPE_CHECKING:
    from bench.figures import Run

KIND = "edit"
BASE = 800_000
APPLY_EDIT, DISK = "agentls, workspace/applyEdit", "agentls, disk path"
FILE = "big.py"
CONTEXT = 3  # lines of context around each hunk, as a model writes them
# What the VS Code extension's client (vscode-languageclient) advertises for edits.
EDITS = {
    "workspace": {
        "applyEdit": True,
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
        },
    }
}


def source(lines: int, salt: str = "") -> str:
    return "".join(f"value_{i:05d} = {i}{salt}\n" for i in range(lines))


def hunk_lines(lines: int, hunks: int) -> list[int]:
    """Where the hunks go: spread evenly over the file."""
    return [k * lines // hunks + lines // (2 * hunks) for k in range(hunks)]


def patch_for(text: str, where: list[int], n: int) -> str:
    """A patch that rewrites line ``i`` for each ``i`` in ``where``, with context."""
    lines = text.splitlines()
    out = ["*** Begin Patch", f"*** Update File: {FILE}"]
    for i in where:
        out.append("@@")
        out += [f" {line}" for line in lines[max(0, i - CONTEXT) : i]]
        name = lines[i].split(" = ", 1)[0]
        out += [f"-{lines[i]}", f"+{name} = {n}  # repetition {n}"]
        out += [f" {line}" for line in lines[i + 1 : i + 1 + CONTEXT]]
    out.append("*** End Patch")
    return "\n".join(out)


class BenchEditor:
    """The client's documents, and what it does with an applyEdit (or a change on disk)."""

    def __init__(self, server: AgentlsServer, workspace: Path) -> None:
        self.server = server
        self.workspace = workspace
        self.documents: dict[str, tuple[str, int]] = {}  # uri -> (text, version)
        self.applied = 0
        self.handler_ms: list[float] = []  # the client's own time per applyEdit
        server.client.on_request("workspace/applyEdit", self.apply_edit)

    def open(self, path: Path, text: str) -> None:
        uri = path.as_uri()
        self.documents[uri] = (text, 1)
        self.server.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    def text(self, path: Path) -> str:
        return self.documents[path.as_uri()][0]

    def _change(self, uri: str, text: str, changes: list[dict[str, Any]]) -> None:
        version = self.documents[uri][1] + 1
        self.documents[uri] = (text, version)
        self.server.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": changes},
        )

    def apply_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter_ns()
        answer = self._apply_edit(params)
        self.handler_ms.append((time.perf_counter_ns() - t0) / 1e6)
        return answer

    def _apply_edit(self, params: dict[str, Any]) -> dict[str, Any]:
        changes = params["edit"].get("documentChanges") or []
        for change in changes:
            document = change.get("textDocument")
            if document is None or document["uri"] not in self.documents:
                return {"applied": False, "failureReason": "the bench edits open documents only"}
            if document.get("version") != self.documents[document["uri"]][1]:
                return {"applied": False, "failureReason": "stale version"}
        for change in changes:
            uri = change["textDocument"]["uri"]
            edits = change["edits"]
            text = apply_text_edits(self.documents[uri][0], edits)
            # Incremental, last first: each change's range is valid when it is applied.
            ordered = sorted(
                edits,
                key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                reverse=True,
            )
            self._change(uri, text, [{"range": e["range"], "text": e["newText"]} for e in ordered])
            # Saved before the answer, as the VS Code extension does (saveAfterEdit).
            path = Path(unquote(urlparse(uri).path))
            path.write_text(text)
        self.applied += 1
        return {"applied": True}

    def reload(self, path: Path) -> None:
        """The file changed on disk: read it again (Neovim's ``checktime``)."""
        uri = path.as_uri()
        text = path.read_text()
        if text != self.documents[uri][0]:
            self._change(uri, text, [{"text": text}])


class ToolTimes:
    """The client's stamps of ``tool.started`` and ``tool.finished``, by call id."""

    def __init__(self, server: AgentlsServer) -> None:
        self.started: dict[str, int] = {}
        self.finished: dict[str, tuple[int, dict[str, Any]]] = {}
        server.client.listen(self._on_message)

    def _on_message(self, message: dict[str, Any], t: int) -> None:
        if message.get("method") != "agent/event":
            return
        params = message.get("params") or {}
        kind, call_id = params.get("kind"), params.get("callId")
        if kind == "tool.started" and call_id:
            self.started[call_id] = t
        elif kind == "tool.finished" and call_id:
            self.finished[call_id] = (t, params)


async def measure(run: Run) -> None:
    raw: dict[str, Any] = {}
    await _round_trips(run, raw)
    await _open_documents(run, raw)
    run.raw["edits"] = raw


async def _start(
    run: Run, name: str, capabilities: dict[str, Any] | None
) -> tuple[AgentlsServer, Path]:
    workspace = run.workspace()
    server = await AgentlsServer.start(
        run.hub.base_url,
        workspace,
        run.stderr_file(name),
        home=run.home,
        options={"approval": "never"},
        capabilities=capabilities,
    )
    return server, workspace


async def _round_trips(run: Run, raw: dict[str, Any]) -> None:
    sizes = run.sizes
    where = hunk_lines(sizes.edit_lines, sizes.edit_hunks)
    patches: dict[int, str] = {}
    run.hub.on(
        KIND,
        lambda n: Reply.tool_call("apply_patch", {"patch": patches[n]}, call_id=f"call_edit_{n}"),
    )
    started = {
        APPLY_EDIT: await _start(run, "edits-apply-edit", EDITS),
        DISK: await _start(run, "edits-disk", None),
    }
    servers = {who: server for who, (server, _) in started.items()}
    editors: dict[str, BenchEditor] = {}
    times = {who: ToolTimes(server) for who, server in servers.items()}
    rows: dict[str, dict[str, list[float]]] = {who: {"model": [], "events": []} for who in servers}
    n = BASE
    try:
        for who, (server, workspace) in started.items():
            path = workspace / FILE
            path.write_text(source(sizes.edit_lines))
            editors[who] = editor = BenchEditor(server, workspace)
            editor.open(path, path.read_text())
            await server.run_turn(f"{tag('warm', n)} warm up")
        for rep in range(sizes.edit_reps + 1):  # the first is a warm-up
            order = (APPLY_EDIT, DISK) if rep % 2 == 0 else (DISK, APPLY_EDIT)
            for who in order:
                n += 1
                editor = editors[who]
                path = editor.workspace / FILE
                patches[n] = patch_for(editor.text(path), where, n)
                model, events = await _patch_turn(run, servers[who], times[who], n)
                if who == DISK:
                    editor.reload(path)
                _check(editor, path, where, n, disk=who == DISK)
                if rep:
                    rows[who]["model"].append(model)
                    rows[who]["events"].append(events)
        raw["applied_edits"] = editors[APPLY_EDIT].applied
        raw["client_ms"] = editors[APPLY_EDIT].handler_ms[1:]  # as the rows: no warm-up
        raw["disk_edits_seen"] = editors[DISK].applied  # must stay 0
    finally:
        for server in servers.values():
            await server.close()
    raw["round_trip"] = rows
    raw["lines"], raw["hunks"] = sizes.edit_lines, sizes.edit_hunks


async def _patch_turn(
    run: Run, server: AgentlsServer, times: ToolTimes, n: int
) -> tuple[float, float]:
    before = run.hub.request_count
    turn = await server.run_turn(f"{tag(KIND, n)} edit the file")
    assert turn.result is not None and turn.result.get("status") == "completed", turn.result
    call_id = f"call_edit_{n}"
    call = run.hub.seen(KIND, n)
    follow = next(
        r
        for r in run.hub.requests_since(before)
        if r.input and r.input[-1].get("call_id") == call_id
    )
    output = str(follow.input[-1].get("output", ""))
    if not output.startswith("Success."):
        raise RuntimeError(f"the patch of repetition {n} failed: {output[:300]}")
    assert call is not None and call.t_done_ns is not None
    t_finished, finished = times.finished[call_id]
    assert finished.get("status") == "completed", finished
    return (
        (follow.t_arrival_ns - call.t_done_ns) / 1e6,
        (t_finished - times.started[call_id]) / 1e6,
    )


def _check(editor: BenchEditor, path: Path, where: list[int], n: int, *, disk: bool) -> None:
    """The edit landed: in the document and on disk (saved, or reloaded)."""
    lines = editor.text(path).splitlines()
    expected = [f"value_{i:05d} = {n}  # repetition {n}" for i in where]
    if [lines[i] for i in where] != expected or path.read_text() != editor.text(path):
        how = "on disk" if disk else "through applyEdit"
        raise RuntimeError(f"repetition {n}: the patch {how} did not land as expected")


async def _open_documents(run: Run, raw: dict[str, Any]) -> None:
    sizes = run.sizes
    server, workspace = await _start(run, "edits-documents", EDITS)
    try:
        editor = BenchEditor(server, workspace)
        paths = []
        for k in range(sizes.open_documents):
            path = workspace / f"doc_{k:03d}.py"
            path.write_text(source(sizes.open_document_lines))
            paths.append(path)
        n = BASE + 90_000
        await server.run_turn(f"{tag('warm', n)} warm up")
        await asyncio.sleep(run.settle)
        rss_before = procs.rss_bytes(server.pid)
        total = 0
        for k, path in enumerate(paths):
            text = f"# unsaved {k}\n" + path.read_text()
            total += len(text.encode())
            editor.open(path, text)
        # One read_file of the last document: every didOpen before it was handled.
        last = paths[-1].name
        run.hub.on(
            "docs",
            lambda n: Reply.tool_call("read_file", {"path": last}, call_id=f"call_docs_{n}"),
        )
        before = run.hub.request_count
        await server.run_turn(f"{tag('docs', n)} read the last one")
        follow = next(
            r
            for r in run.hub.requests_since(before)
            if r.input and r.input[-1].get("call_id") == f"call_docs_{n}"
        )
        marker = f"# unsaved {sizes.open_documents - 1}"
        if marker not in str(follow.input[-1].get("output", "")):
            raise RuntimeError("read_file did not return the open document's text")
        await asyncio.sleep(run.settle)
        rss_after = procs.rss_bytes(server.pid)
        raw["documents"] = {
            "count": sizes.open_documents,
            "lines": sizes.open_document_lines,
            "text_bytes": total,
            "rss_before": rss_before,
            "rss_after": rss_after,
        }
    finally:
        await server.close()
