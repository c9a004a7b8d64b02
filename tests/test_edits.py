"""Edits through the editor: the buffer is the truth. The server reads the
documents the editor has open, sends every patch as one ``workspace/applyEdit``
(versioned for open documents, with create/rename/delete), keeps the disk path
for editors that cannot take edits, asks before every patch in review mode,
offers the editor's diagnostics to the model, and serves plain LSP clients
through a command and code actions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp

from agentls.testing.fake_model import FakeModelThread, Reply

from .editor_support import file_text
from .lsp_support import AgentClient, initialize, server_config
from .support import tool_outputs

APP = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n"
FIX_MEAN = """*** Begin Patch
*** Update File: app.py
@@ def mean(xs):
-    return total(xs) / len(xs)
+    return total(xs) / max(len(xs), 1)
*** End Patch"""


@pytest.fixture
def profile() -> dict[str, Any]:
    """The client: its capabilities (a pytest-lsp snapshot), ``experimental``
    and initializationOptions."""
    return {"capabilities": "visual-studio-code"}


@pytest.fixture
def asked() -> list[Any]:
    return []


@pytest.fixture
def answers() -> list[Any]:
    return []


@pytest_lsp.fixture(config=server_config())
async def editor(
    lsp_client: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    profile: dict[str, Any],
    asked: list[Any],
    answers: list[Any],
) -> AsyncIterator[None]:
    async def request_approval(params: Any) -> Any:
        asked.append(params)
        lsp_client.poke()
        return answers.pop(0)

    lsp_client.feature("agent/requestApproval")(request_approval)
    options = {"approval": "never", **profile.get("options", {})}
    lsp_client.init_result = await initialize(
        lsp_client,
        workspace,
        fake.base_url,
        capabilities=profile["capabilities"],
        experimental=profile.get("experimental"),
        **options,
    )
    yield
    if not lsp_client.stopped:
        await lsp_client.shutdown_session()


def patch_call(patch: str, call_id: str = "p1") -> Reply:
    return Reply.tool_call("apply_patch", {"patch": patch}, call_id=call_id)


async def test_open_documents_are_what_the_agent_reads_and_edits(
    editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    """A dirty document is read as the editor has it; a patch to it arrives
    as one versioned applyEdit that keeps the user's unsaved line, and the
    disk stays as it was; tool.finished carries the diff."""
    app = workspace / "app.py"
    app.write_text(APP)
    editor.editor.open(app)
    editor.editor.insert(app, 0, "import math  # unsaved\n")
    fake.script(
        Reply.tool_call("read_file", {"path": "app.py"}, call_id="r1"),
        patch_call(FIX_MEAN),
        Reply.text("fixed"),
    )
    result = await editor.call("agent/submit", {"prompt": "fix mean"})
    assert result["status"] == "completed", result
    read = fake.requests[1].body
    read_output = next(i["output"] for i in read["input"] if i["type"] == "function_call_output")
    assert read_output.startswith("1\timport math  # unsaved\n2\tdef total(xs):")
    assert tool_outputs(fake)[-1].startswith("Success. Updated the following files:\nM app.py")

    (edit,) = editor.editor.edits
    (change,) = edit["edit"]["documentChanges"]
    assert change["textDocument"] == {"uri": app.as_uri(), "version": 2}
    # Whole lines, only the one that changed (line 7 now: the unsaved line is above it).
    (text_edit,) = change["edits"]
    assert text_edit["range"]["start"] == {"line": 6, "character": 0}
    assert text_edit["range"]["end"] == {"line": 7, "character": 0}
    assert editor.editor.text(app) == "import math  # unsaved\n" + APP.replace(
        "/ len(xs)", "/ max(len(xs), 1)"
    )
    assert file_text(app) == APP  # the disk: untouched, the buffer is the truth
    finished = await editor.event("tool.finished", lambda e: e["callId"] == "p1")
    assert finished["status"] == "completed"
    diff = finished["diff"]
    assert diff.startswith("--- a/app.py\n+++ b/app.py\n@@ -4,4 +4,4 @@")
    assert "-    return total(xs) / len(xs)\n+    return total(xs) / max(len(xs), 1)\n" in diff


async def test_a_refused_edit_is_an_error_the_model_reads(
    editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    """applied: false, or a document that changed after the model read it:
    the file is left alone and the model is told to read it again."""
    app = workspace / "app.py"
    app.write_text(APP)
    editor.editor.open(app)
    editor.editor.refuse = {"applied": False, "failureReason": "the user is typing"}
    fake.script(patch_call(FIX_MEAN, "p1"), patch_call(FIX_MEAN, "p2"), Reply.text("gave up"))
    result = await editor.call("agent/submit", {"prompt": "fix mean"})
    assert result["status"] == "completed"
    first = [
        i["output"] for i in fake.requests[1].body["input"] if i["type"] == "function_call_output"
    ][-1]
    assert "the editor did not apply the patch (the user is typing)" in first
    assert "Read the files again and retry" in first and "no files were changed" in first
    # The second try goes through (the client applies it).
    assert tool_outputs(fake)[-1].startswith("Success.")
    assert editor.editor.text(app) == APP.replace("/ len(xs)", "/ max(len(xs), 1)")
    assert file_text(app) == APP
    statuses = [e["status"] for e in editor.of("tool.finished")]
    assert statuses == ["failed", "completed"]
    assert "diff" not in editor.of("tool.finished")[0]


async def test_resource_operations_add_move_and_delete(
    editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    """Files are created, renamed and deleted by the editor (in one edit,
    in order); an open document that moves is edited before it moves."""
    (workspace / "old.txt").write_text("old\n")
    (workspace / "gone.txt").write_text("bye\n")
    app = workspace / "app.py"
    app.write_text(APP)
    editor.editor.open(app)
    patch = """*** Begin Patch
*** Add File: pkg/new.py
+NEW = 1
*** Update File: app.py
*** Move to: lib/stats.py
@@
-def total(xs):
+def total(xs):  # moved
*** Delete File: gone.txt
*** Update File: old.txt
@@
-old
+new
*** End Patch"""
    fake.script(patch_call(patch), Reply.text("done"))
    result = await editor.call("agent/submit", {"prompt": "reorganise"})
    assert result["status"] == "completed"
    (edit,) = editor.editor.edits
    kinds = [c.get("kind", "edit") for c in edit["edit"]["documentChanges"]]
    assert kinds == ["create", "edit", "edit", "rename", "delete", "edit"]
    changes = edit["edit"]["documentChanges"]
    assert changes[0]["uri"] == (workspace / "pkg/new.py").as_uri()
    assert changes[1]["textDocument"]["version"] is None
    assert changes[2]["textDocument"] == {"uri": app.as_uri(), "version": 1}
    assert changes[3]["oldUri"] == app.as_uri()
    assert changes[3]["newUri"] == (workspace / "lib/stats.py").as_uri()
    assert changes[5]["textDocument"] == {"uri": (workspace / "old.txt").as_uri(), "version": None}
    assert (workspace / "pkg/new.py").read_text() == "NEW = 1\n"
    assert not (workspace / "gone.txt").exists()
    assert (workspace / "old.txt").read_text() == "new\n"
    moved = (workspace / "lib/stats.py").as_uri()
    assert editor.editor.documents[moved][0].startswith("def total(xs):  # moved\n")
    finished = await editor.event("tool.finished")
    assert "+++ b/pkg/new.py" in finished["diff"] and "+++ /dev/null" in finished["diff"]


@pytest.mark.parametrize("profile", [{"capabilities": "neovim"}])
async def test_editors_without_document_changes_keep_the_disk_path(
    profile: dict[str, Any], editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    """Neovim's own capabilities take applyEdit but not documentChanges: the
    patch is written on disk — unless a document it changes has unsaved
    changes, which writing would throw away."""
    app = workspace / "app.py"
    app.write_text(APP)
    other = workspace / "other.py"
    other.write_text("x = 1\n")
    editor.editor.open(app)
    editor.editor.open(other)
    editor.editor.insert(other, 0, "# unsaved\n")
    other_patch = "*** Begin Patch\n*** Update File: other.py\n@@\n x = 1\n+y = 2\n*** End Patch"
    fake.script(patch_call(FIX_MEAN, "p1"), patch_call(other_patch, "p2"), Reply.text("ok"))
    result = await editor.call("agent/submit", {"prompt": "fix"})
    assert result["status"] == "completed"
    assert editor.editor.edits == []
    assert file_text(app) == APP.replace("/ len(xs)", "/ max(len(xs), 1)")
    refused = tool_outputs(fake)[-1]
    assert "other.py has unsaved changes in the editor" in refused
    assert "no files were changed" in refused
    assert file_text(other) == "x = 1\n"


REVIEW = {
    "capabilities": "visual-studio-code",
    "experimental": {"agentls": {"requestApproval": True}},
    "options": {"review": True},
}


@pytest.mark.parametrize("profile", [REVIEW])
async def test_review_mode_asks_before_every_patch(
    profile: dict[str, Any],
    editor: AgentClient,
    fake: FakeModelThread,
    workspace: Path,
    asked: list[Any],
    answers: list[Any],
) -> None:
    """Whatever the approval policy (here: never), each patch waits for the
    user with its diff. Accepted, it is applied; rejected, nothing changes
    and the model reads the user's reason."""
    app = workspace / "app.py"
    app.write_text(APP)
    editor.editor.open(app)
    answers.extend(
        [{"decision": "deny", "reason": "keep len, raise instead"}, {"decision": "allow"}]
    )
    fake.script(
        patch_call(FIX_MEAN, "p1"),
        patch_call(FIX_MEAN.replace("max(len(xs), 1)", "len(xs) or 1"), "p2"),
        Reply.text("done"),
    )
    result = await editor.call("agent/submit", {"prompt": "fix mean"})
    assert result["status"] == "completed"
    rejected, accepted = asked
    assert rejected["review"] is True and rejected["tool"] == "apply_patch"
    assert "+    return total(xs) / max(len(xs), 1)" in rejected["diff"]
    output = [
        i["output"] for i in fake.requests[1].body["input"] if i["type"] == "function_call_output"
    ][-1]
    assert "rejected" in output and "keep len, raise instead" in output
    assert accepted["callId"] == "p2"
    assert len(editor.editor.edits) == 1  # only the accepted patch reached the editor
    assert editor.editor.text(app) == APP.replace("/ len(xs)", "/ len(xs) or 1")
    # Review can be turned off (agent/setReview): the next patch does not ask.
    answer = await editor.call("agent/setReview", {"enabled": False})
    assert answer == {"pane": "main", "enabled": False}
    again = FIX_MEAN.replace(
        "-    return total(xs) / len(xs)", "-    return total(xs) / len(xs) or 1"
    )
    fake.script(patch_call(again, "p3"), Reply.text("ok"))
    result = await editor.call("agent/submit", {"prompt": "again"})
    assert result["status"] == "completed"
    assert len(asked) == 2 and len(editor.editor.edits) == 2


DIAGNOSTICS = {
    "capabilities": "visual-studio-code",
    "experimental": {"agentls": {"requestApproval": True, "diagnostics": True}},
}


@pytest.mark.parametrize("profile", [DIAGNOSTICS])
async def test_get_diagnostics_returns_what_the_editor_shows(
    profile: dict[str, Any], editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    app = workspace / "app.py"
    app.write_text(APP)
    editor.editor.open(app)
    questions: list[Any] = []

    def diagnostics(params: Any) -> dict[str, Any]:
        questions.append(params)
        at = {"line": 5, "character": 11}
        return {
            "diagnostics": [
                {
                    "uri": app.as_uri(),
                    "range": {"start": at, "end": at},
                    "severity": 1,
                    "source": "Pyright",
                    "message": '"total" is not defined',
                },
                {
                    "uri": (workspace / "other.py").as_uri(),
                    "range": {"start": {"line": 0, "character": 0}, "end": at},
                    "severity": 2,
                    "message": "unused import",
                },
            ]
        }

    editor.feature("agent/diagnostics")(diagnostics)
    fake.script(
        Reply.tool_call("get_diagnostics", {"path": "app.py"}, call_id="d1"),
        Reply.tool_call("get_diagnostics", {}, call_id="d2"),
        Reply.text("checked"),
    )
    await editor.call("agent/submit", {"prompt": "check"})
    offered = {tool.get("name") for tool in fake.requests[0].body["tools"]}
    assert "get_diagnostics" in offered
    assert [_plain_params(q) for q in questions] == [{"uri": app.as_uri()}, {}]
    one, every = tool_outputs(fake)
    assert one == (
        'The editor shows 1 error in app.py:\napp.py:6:12: error [Pyright]: "total" is not defined'
    )
    assert "1 error, 1 warning in any file" in every
    assert "other.py:1:1: warning: unused import" in every


async def test_get_diagnostics_is_offered_only_to_editors_that_answer(
    editor: AgentClient, fake: FakeModelThread
) -> None:
    fake.script(Reply.text("hi"))
    await editor.call("agent/submit", {"prompt": "hello"})
    offered = {tool.get("name") for tool in fake.requests[0].body["tools"]}
    assert "get_diagnostics" not in offered and "apply_patch" in offered


def _plain_params(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain_params(v) for k, v in value._asdict().items()}
    return value if value is not None else {}


# --- plain LSP clients -----------------------------------------------------------------


@pytest.mark.parametrize("profile", [{"capabilities": "emacs"}])
async def test_plain_lsp_clients_ask_through_a_command_and_code_actions(
    profile: dict[str, Any], editor: AgentClient, fake: FakeModelThread, workspace: Path
) -> None:
    """Emacs (eglot) as it comes: the server lists agentls.ask, offers the
    two code actions, answers the command at once, shows the turn's answer in
    window/showMessage with progress meanwhile, and edits by applyEdit."""
    assert editor.init_result is not None
    provider = editor.init_result.capabilities.execute_command_provider
    assert provider is not None and list(provider.commands) == ["agentls.ask"]
    app = workspace / "app.py"
    app.write_text(APP)
    uri = editor.editor.open(app)
    selection = lsp.Range(
        start=lsp.Position(line=4, character=0), end=lsp.Position(line=5, character=0)
    )
    problem = lsp.Diagnostic(
        range=lsp.Range(
            start=lsp.Position(line=5, character=11), end=lsp.Position(line=5, character=16)
        ),
        message="division by zero when xs is empty",
        source="mylinter",
    )
    actions = await editor.call(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionParams(  # type: ignore[arg-type]
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=selection,
            context=lsp.CodeActionContext(diagnostics=[problem]),
        ),
    )
    ask, fix = actions
    assert (ask["title"], fix["title"]) == ("Ask agentls about this", "Fix with agentls")
    assert fix["kind"] == "quickfix" and fix["diagnostics"][0]["message"] == problem.message
    assert ask["command"]["command"] == fix["command"]["command"] == "agentls.ask"
    assert ask["command"]["arguments"][0]["range"] == {
        "start": {"line": 4, "character": 0},
        "end": {"line": 5, "character": 0},
    }
    (argument,) = fix["command"]["arguments"]
    assert argument["uri"] == uri and "division by zero" in argument["prompt"]

    fake.script(patch_call(FIX_MEAN), Reply.text("Guarded the division."))
    shown = asyncio.ensure_future(editor.wait_for_notification(lsp.WINDOW_SHOW_MESSAGE))
    started = await editor.workspace_execute_command_async(
        lsp.ExecuteCommandParams(command="agentls.ask", arguments=[argument])
    )
    assert started is not None
    assert started["pane"] == "main" and isinstance(started["turnId"], int)
    async with asyncio.timeout(10):
        message = await shown
    assert message.message == "agentls: Guarded the division."
    prompt = fake.requests[0].body["input"][-1]["content"][0]["text"]
    assert prompt.startswith("Fix this problem in app.py at line 6 (mylinter): division by zero")
    assert "    return total(xs) / len(xs)" in prompt  # the diagnostic's line, as context
    assert editor.editor.text(app) == APP.replace("/ len(xs)", "/ max(len(xs), 1)")
    reports = editor.progress_reports
    assert any(isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in reports.values() if r)
