"""apply_patch: Codex's patch format, applied atomically inside the workspace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentls.tools.apply_patch import apply_patch, main
from agentls.tools.patch.errors import PatchError
from agentls.tools.patch.grammar import affected_paths, parse_patch
from agentls.tools.patch.plan import FileChange, PatchResult
from agentls.tools.patch.seek import seek_sequence
from agentls.tools.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under root: file bytes, "dir", or "-> target" for a symlink."""
    tree: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                tree[rel] = "-> " + os.readlink(full)
            elif full.is_dir():
                tree[rel] = "dir"
            else:
                tree[rel] = full.read_bytes()
    return tree


def apply(root: Path, text: str) -> PatchResult:
    return apply_patch(text, Workspace(root))


def rejected(root: Path, text: str) -> str:
    before = snapshot(root)
    with pytest.raises(PatchError) as info:
        apply(root, text)
    assert snapshot(root) == before, "a rejected patch must change nothing"
    message = str(info.value)
    assert "no files were changed" in message
    return message


# --- grammar ----------------------------------------------------------------------


def test_add_file_creates_parent_directories(tmp_path: Path) -> None:
    result = apply(tmp_path, patch("*** Add File: src/pkg/new.py", "+a = 1", "+", "+b = 2"))
    assert (tmp_path / "src/pkg/new.py").read_bytes() == b"a = 1\n\nb = 2\n"
    assert result.changes == (FileChange("add", "src/pkg/new.py"),)
    assert result.summary() == "Success. Updated the following files:\nA src/pkg/new.py"


def test_add_file_overwrites_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "dup.txt").write_text("old\n")
    apply(tmp_path, patch("*** Add File: dup.txt", "+new"))
    assert (tmp_path / "dup.txt").read_text() == "new\n"


def test_delete_file(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("bye\n")
    (tmp_path / "keep.txt").write_text("stay\n")
    result = apply(tmp_path, patch("*** Delete File: old.txt"))
    assert snapshot(tmp_path) == {"keep.txt": b"stay\n"}
    assert result.summary().endswith("\nD old.txt")


def test_update_with_several_chunks(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("1\n2\n3\n4\n5\n6\n")
    apply(
        tmp_path,
        patch("*** Update File: m.txt", "@@", " 1", "-2", "+two", "@@", " 4", "-5", "+five"),
    )
    assert (tmp_path / "m.txt").read_text() == "1\ntwo\n3\n4\nfive\n6\n"


def test_first_chunk_may_omit_the_at_at_line(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("import os\n")
    apply(tmp_path, patch("*** Update File: m.txt", " import os", "+import sys"))
    assert (tmp_path / "m.txt").read_text() == "import os\nimport sys\n"


def test_at_at_anchor_selects_the_right_occurrence(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 0\n\ndef g():\n    return 0\n")
    apply(tmp_path, patch("*** Update File: a.py", "@@ def g():", "-    return 0", "+    return 1"))
    assert (tmp_path / "a.py").read_text() == "def f():\n    return 0\n\ndef g():\n    return 1\n"


def test_chunks_apply_in_order(tmp_path: Path) -> None:
    # The second chunk's lines also occur before the first change: it must
    # match after it.
    (tmp_path / "a.txt").write_text("x\nmark\nx\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", "-mark", "+MARK", "@@", "-x", "+y"))
    assert (tmp_path / "a.txt").read_text() == "x\nMARK\ny\n"


def test_pure_addition_appends_at_end_of_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("line1\nline2\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", "+added 1", "+added 2"))
    assert (tmp_path / "a.txt").read_text() == "line1\nline2\nadded 1\nadded 2\n"


def test_pure_addition_after_an_anchor_goes_after_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("class A:\n    x = 1\n\nclass B:\n    y = 2\n")
    apply(tmp_path, patch("*** Update File: a.py", "@@ class A:", "+    w = 0"))
    assert (
        tmp_path / "a.py"
    ).read_text() == "class A:\n    w = 0\n    x = 1\n\nclass B:\n    y = 2\n"


def test_end_of_file_marker_matches_the_last_lines(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("end\nmiddle\nend\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", "-end", "+END", "*** End of File"))
    assert (tmp_path / "a.txt").read_text() == "end\nmiddle\nEND\n"


def test_end_of_file_marker_rejects_lines_not_at_the_end(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first\nsecond\n")
    message = rejected(
        tmp_path, patch("*** Update File: a.txt", "@@", "-first", "+1st", "*** End of File")
    )
    assert "at the end of the file" in message


def test_move_to_creates_directories_and_removes_the_source(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old/name.txt").write_text("old content\n")
    (tmp_path / "old/other.txt").write_text("x\n")
    result = apply(
        tmp_path,
        patch(
            "*** Update File: old/name.txt",
            "*** Move to: renamed/dir/name.txt",
            "@@",
            "-old content",
            "+new content",
        ),
    )
    assert snapshot(tmp_path) == {
        "old": "dir",
        "old/other.txt": b"x\n",
        "renamed": "dir",
        "renamed/dir": "dir",
        "renamed/dir/name.txt": b"new content\n",
    }
    assert result.changes == (FileChange("update", "old/name.txt", "renamed/dir/name.txt"),)
    assert result.summary() == "Success. Updated the following files:\nM renamed/dir/name.txt"


def test_move_overwrites_the_destination_and_keeps_the_mode(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo old\n")
    (tmp_path / "run.sh").chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/run.sh").write_text("existing\n")
    apply(
        tmp_path,
        patch(
            "*** Update File: run.sh",
            "*** Move to: bin/run.sh",
            "@@",
            "-echo old",
            "+echo new",
        ),
    )
    assert not (tmp_path / "run.sh").exists()
    assert (tmp_path / "bin/run.sh").read_text() == "echo new\n"
    assert stat.S_IMODE((tmp_path / "bin/run.sh").stat().st_mode) == 0o755


def test_update_keeps_the_file_mode(tmp_path: Path) -> None:
    (tmp_path / "tool").write_text("#!/bin/sh\necho 1\n")
    (tmp_path / "tool").chmod(0o750)
    apply(tmp_path, patch("*** Update File: tool", "@@", "-echo 1", "+echo 2"))
    assert stat.S_IMODE((tmp_path / "tool").stat().st_mode) == 0o750


def test_whitespace_padded_markers_and_headers(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "b.txt").write_text("two\n")
    text = (
        "\n  *** Begin Patch  \n"
        "  *** Update File: a.txt\n@@\n-one\n+1\n"
        "  *** Update File: b.txt \n@@\n-two\n+2\n"
        " *** End Patch \n\n"
    )
    apply(tmp_path, text)
    assert (tmp_path / "a.txt").read_text() == "1\n"
    assert (tmp_path / "b.txt").read_text() == "2\n"


def test_heredoc_wrapped_patch(tmp_path: Path) -> None:
    text = "<<'EOF'\n" + patch("*** Add File: h.txt", "+hi") + "EOF\n"
    apply(tmp_path, text)
    assert (tmp_path / "h.txt").read_text() == "hi\n"
    apply(tmp_path, 'apply_patch <<"PATCH"\n' + patch("*** Delete File: h.txt") + "PATCH")
    assert not (tmp_path / "h.txt").exists()


def test_crlf_patch_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", "-old", "+new").replace("\n", "\r\n"))
    assert (tmp_path / "a.txt").read_bytes() == b"new\n"


def test_several_sections_on_one_file_apply_in_sequence(tmp_path: Path) -> None:
    result = apply(
        tmp_path,
        patch(
            "*** Add File: a.txt",
            "+one",
            "*** Update File: a.txt",
            "@@",
            "-one",
            "+two",
            "*** Update File: a.txt",
            "*** Move to: b.txt",
            "@@",
            "-two",
            "+three",
        ),
    )
    assert snapshot(tmp_path) == {"b.txt": b"three\n"}
    assert result.summary() == ("Success. Updated the following files:\nA a.txt\nM a.txt\nM b.txt")


def test_parse_patch_structure() -> None:
    parsed = parse_patch(
        patch(
            "*** Add File: new.txt",
            "+x",
            "*** Delete File: gone.txt",
            "*** Update File: mod.py",
            "*** Move to: moved.py",
            "@@ def f():",
            " keep",
            "-old",
            "+new",
            "*** End of File",
        )
    )
    add, delete, update = parsed.hunks
    assert (add.kind, add.path, add.contents) == ("add", "new.txt", "x\n")
    assert (delete.kind, delete.path) == ("delete", "gone.txt")
    assert (update.kind, update.path, update.move_to) == ("update", "mod.py", "moved.py")
    (chunk,) = update.chunks
    assert chunk.context == "def f():"
    assert chunk.old_lines == ["keep", "old"]
    assert chunk.new_lines == ["keep", "new"]
    assert chunk.end_of_file
    assert chunk.line == 7
    assert parsed.paths() == ["new.txt", "gone.txt", "mod.py", "moved.py"]


def test_affected_paths_never_raises() -> None:
    text = patch("*** Update File: src/app.py", "*** Move to: src/main.py", "@@", "-a", "+b")
    assert affected_paths(text) == ["src/app.py", "src/main.py"]
    assert affected_paths("*** Begin Patch\n*** Add File: x") == []
    assert affected_paths("garbage") == []
    assert affected_paths("") == []


# --- rejected patches ---------------------------------------------------------------


def test_empty_patch_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "foo.txt").write_text("stable\n")
    assert "empty" in rejected(tmp_path, patch())
    assert "Begin Patch" in rejected(tmp_path, "")


def test_missing_markers_are_rejected(tmp_path: Path) -> None:
    assert "first line" in rejected(tmp_path, "*** Add File: a\n+x\n*** End Patch")
    assert "last line" in rejected(tmp_path, "*** Begin Patch\n*** Add File: a\n+x\n")


def test_invalid_hunk_header_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "foo.txt").write_text("stable\n")
    message = rejected(tmp_path, patch("*** Frobnicate File: foo.txt"))
    assert "'*** Frobnicate File: foo.txt' is not a valid hunk header" in message
    assert "patch line 2" in message


def test_forgotten_plus_on_an_empty_added_line_is_explained(tmp_path: Path) -> None:
    message = rejected(tmp_path, patch("*** Add File: a.txt", "+one", "", "+three"))
    assert "a.txt (patch line 4)" in message
    assert "must start with '+'" in message


def test_missing_context_names_the_file_and_the_lines(tmp_path: Path) -> None:
    (tmp_path / "modify.txt").write_text("line1\nline2\n")
    message = rejected(tmp_path, patch("*** Update File: modify.txt", "@@", "-missing", "+x"))
    assert "modify.txt (patch line 3)" in message
    assert "could not find" in message
    assert "    missing" in message


def test_missing_anchor_is_named(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    message = rejected(tmp_path, patch("*** Update File: a.py", "@@ def g():", "-    pass", "+"))
    assert "'def g():'" in message


def test_update_of_a_missing_file_is_rejected(tmp_path: Path) -> None:
    message = rejected(tmp_path, patch("*** Update File: missing.txt", "@@", "-old", "+new"))
    assert "missing.txt" in message and "does not exist" in message


def test_delete_of_a_missing_file_is_rejected(tmp_path: Path) -> None:
    assert "does not exist" in rejected(tmp_path, patch("*** Delete File: missing.txt"))


def test_delete_of_a_directory_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir/foo.txt").write_text("stable\n")
    assert "directory" in rejected(tmp_path, patch("*** Delete File: dir"))


def test_empty_update_hunk_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "foo.txt").write_text("stable\n")
    assert "no changes" in rejected(tmp_path, patch("*** Update File: foo.txt"))
    assert "no lines" in rejected(tmp_path, patch("*** Update File: foo.txt", "@@"))


def test_non_utf8_file_is_refused_not_corrupted(tmp_path: Path) -> None:
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    message = rejected(tmp_path, patch("*** Update File: latin1.txt", "@@", "-caf", "+cafe"))
    assert "not UTF-8" in message


def test_add_over_a_directory_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert "directory" in rejected(tmp_path, patch("*** Add File: d", "+x"))


def test_a_file_in_the_way_of_a_new_directory_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("file\n")
    assert "in the way" in rejected(tmp_path, patch("*** Add File: f/x.txt", "+x"))


# --- tolerant matching ----------------------------------------------------------------


def test_seek_sequence_levels() -> None:
    lines = ["foo   ", "  bar\t", "x"]
    assert seek_sequence(lines, ["foo", "bar"], 0, False) == 0  # trailing, then both sides
    assert seek_sequence(["a", "b"], ["b"], 0, False) == 1
    assert seek_sequence(["a", "b"], ["a"], 1, False) is None  # only at or after start
    assert seek_sequence(["a"], ["a", "b"], 0, False) is None  # longer than the file
    assert seek_sequence(["a", "b"], [], 1, False) == 1
    # An exact match anywhere beats a tolerant one earlier in the file.
    assert seek_sequence(["x  ", "x"], ["x"], 0, False) == 1
    assert seek_sequence(["x", "x"], ["x"], 0, True) == 1  # end of file: the last lines
    quoted = ["say \u201chi\u201d \u2013 it\u2019s\u00a0ok"]
    assert seek_sequence(quoted, ['say "hi" - it\'s ok'], 0, False) == 0


def test_trailing_whitespace_is_tolerated_and_context_lines_kept(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("keep   \nold\t\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", " keep", "-old", "+new"))
    # The context line is the file's own, trailing spaces and all.
    assert (tmp_path / "a.txt").read_text() == "keep   \nnew\n"


def test_indentation_differences_are_tolerated(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("if x:\n        call()\n")
    apply(tmp_path, patch("*** Update File: a.py", "@@", " if x:", "-    call()", "+    done()"))
    assert (tmp_path / "a.py").read_text() == "if x:\n    done()\n"


def test_unicode_punctuation_is_tolerated(tmp_path: Path) -> None:
    original = "import asyncio  # local import \u2013 avoids top\u2011level dep\n"
    (tmp_path / "u.py").write_text(original, encoding="utf-8")
    apply(
        tmp_path,
        patch(
            "*** Update File: u.py",
            "@@",
            "-import asyncio  # local import - avoids top-level dep",
            "+import asyncio  # HELLO",
        ),
    )
    assert (tmp_path / "u.py").read_text(encoding="utf-8") == "import asyncio  # HELLO\n"


def test_trailing_blank_context_line_is_tolerated(tmp_path: Path) -> None:
    # A blank line at the end of a chunk stands for the file's final newline.
    (tmp_path / "a.txt").write_text("a\nb\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", " a", "-b", "+B", ""))
    assert (tmp_path / "a.txt").read_text() == "a\nB\n"


# --- line endings ---------------------------------------------------------------------


def test_crlf_file_stays_crlf(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    apply(tmp_path, patch("*** Update File: w.txt", "@@", "-one", "+ONE", " two", "+between"))
    assert (tmp_path / "w.txt").read_bytes() == b"ONE\r\ntwo\r\nbetween\r\nthree\r\n"


def test_mixed_line_endings_keep_their_own(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"one\r\ntwo\rthree\nfour\r\nfive\n")
    apply(tmp_path, patch("*** Update File: m.txt", "@@", " two", "-three", "+THREE", " four"))
    # Kept lines keep their endings; a new line takes the file's first ending.
    assert (tmp_path / "m.txt").read_bytes() == b"one\r\ntwo\rTHREE\r\nfour\r\nfive\n"


def test_updated_file_ends_with_a_newline(tmp_path: Path) -> None:
    (tmp_path / "n.txt").write_bytes(b"a\nlast")
    apply(tmp_path, patch("*** Update File: n.txt", "@@", "-a", "+A"))
    assert (tmp_path / "n.txt").read_bytes() == b"A\nlast\n"


def test_byte_order_mark_is_kept(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_bytes(b"\xef\xbb\xbfhead\r\nbody\r\n")
    apply(tmp_path, patch("*** Update File: b.txt", "@@", "-head", "+HEAD"))
    assert (tmp_path / "b.txt").read_bytes() == b"\xef\xbb\xbfHEAD\r\nbody\r\n"


# --- atomicity ------------------------------------------------------------------------


def test_failing_third_change_leaves_the_tree_byte_identical(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    message = rejected(
        tmp_path,
        patch(
            "*** Add File: new/deep/dir/created.txt",
            "+hello",
            "*** Update File: a.txt",
            "@@",
            "-a",
            "+A",
            "*** Update File: b.txt",
            "@@",
            "-not there",
            "+B",
            "*** Delete File: a.txt",
        ),
    )
    assert "b.txt (patch line 9)" in message
    assert not (tmp_path / "new").exists()


def test_write_failure_midway_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    (tmp_path / "gone.txt").write_text("gone\n")
    before = snapshot(tmp_path)
    real_rename = os.rename
    calls = 0

    def failing_rename(*args: object, **kwargs: object) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise OSError(28, "No space left on device")
        real_rename(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", failing_rename)
    with pytest.raises(PatchError) as info:
        apply(
            tmp_path,
            patch(
                "*** Update File: a.txt",
                "@@",
                "-a",
                "+A",
                "*** Add File: fresh/dir/b.txt",
                "+new",
                "*** Delete File: gone.txt",
            ),
        )
    message = str(info.value)
    assert "No space left on device" in message
    assert "restored" in message
    # a.txt was already replaced when the second write failed: it is back,
    # the directories made for fresh/dir/b.txt are gone, no temp file is left.
    assert snapshot(tmp_path) == before


def test_a_rejection_says_nothing_changed_whatever_words_it_quotes(tmp_path: Path) -> None:
    # What became of the files is told by the failure's kind, not its words: a
    # context line that mentions "restored" is still a patch that changed nothing.
    (tmp_path / "a.py").write_text("def kept():\n    pass\n")
    message = rejected(tmp_path, patch("*** Update File: a.py", "@@ def restored():", "-x", "+y"))
    assert message.endswith("The patch was not applied; no files were changed.")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_unwritable_directory_rolls_back(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.txt").write_text("b\n")
    locked.chmod(0o555)
    try:
        before = snapshot(tmp_path)
        with pytest.raises(PatchError):
            apply(
                tmp_path,
                patch(
                    "*** Update File: a.txt",
                    "@@",
                    "-a",
                    "+A",
                    "*** Update File: locked/b.txt",
                    "@@",
                    "-b",
                    "+B",
                ),
            )
        assert snapshot(tmp_path) == before
    finally:
        locked.chmod(0o755)


# --- confinement ----------------------------------------------------------------------


@pytest.fixture
def ws_and_outside(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (ws / "inside.txt").write_text("inside\n")
    return ws, outside


def test_dotdot_escape_is_refused(ws_and_outside: tuple[Path, Path]) -> None:
    ws, outside = ws_and_outside
    before = snapshot(outside)
    assert "outside the workspace" in rejected(ws, patch("*** Add File: ../x.txt", "+x"))
    message = rejected(ws, patch("*** Delete File: ../outside/secret.txt"))
    assert "outside the workspace" in message
    assert snapshot(outside) == before
    assert not (ws.parent / "x.txt").exists()


def test_absolute_path_outside_is_refused(ws_and_outside: tuple[Path, Path]) -> None:
    ws, outside = ws_and_outside
    before = snapshot(outside)
    message = rejected(ws, patch("*** Update File: /etc/passwd", "@@", "-no such line", "+x"))
    assert "outside the workspace" in message
    secret = str(outside / "secret.txt")
    assert "outside the workspace" in rejected(ws, patch(f"*** Delete File: {secret}"))
    assert snapshot(outside) == before


def test_absolute_path_inside_is_accepted(ws_and_outside: tuple[Path, Path]) -> None:
    ws, _ = ws_and_outside
    result = apply(ws, patch(f"*** Update File: {ws / 'inside.txt'}", "@@", "-inside", "+in"))
    assert (ws / "inside.txt").read_text() == "in\n"
    assert result.changes == (FileChange("update", "inside.txt"),)


def test_symlink_to_a_directory_outside_is_refused(ws_and_outside: tuple[Path, Path]) -> None:
    ws, outside = ws_and_outside
    (ws / "link").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    assert "outside the workspace" in rejected(ws, patch("*** Add File: link/new.txt", "+x"))
    message = rejected(ws, patch("*** Update File: link/secret.txt", "@@", "-secret", "+pwned"))
    assert "outside the workspace" in message
    assert "outside the workspace" in rejected(ws, patch("*** Delete File: link/secret.txt"))
    assert snapshot(outside) == before


def test_move_to_outside_is_refused(ws_and_outside: tuple[Path, Path]) -> None:
    ws, outside = ws_and_outside
    before = snapshot(outside)
    message = rejected(
        ws,
        patch(
            "*** Update File: inside.txt",
            "*** Move to: ../outside/stolen.txt",
            "@@",
            "-inside",
            "+x",
        ),
    )
    assert "outside the workspace" in message
    assert snapshot(outside) == before


def test_symlink_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("v1\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    # An update writes through the link; the link stays a link.
    apply(tmp_path, patch("*** Update File: link.txt", "@@", "-v1", "+v2"))
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "v2\n"
    # A delete removes the link itself, not what it points to.
    apply(tmp_path, patch("*** Delete File: link.txt"))
    assert snapshot(tmp_path) == {"real.txt": b"v2\n"}


# --- the command ----------------------------------------------------------------------


def test_main_prints_summary_or_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = patch("*** Add File: a.txt", "+x").encode()
    assert main(ok, str(tmp_path)) == 0
    out, err = capsys.readouterr()
    assert out == "Success. Updated the following files:\nA a.txt\n"
    assert err == ""
    bad = patch("*** Update File: a.txt", "@@", "-nope", "+y").encode()
    assert main(bad, str(tmp_path)) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "a.txt" in err and "could not find" in err
    assert main(b"\xff\xfe", str(tmp_path)) == 1
    assert "UTF-8" in capsys.readouterr().err


def test_pure_addition_goes_before_a_final_blank_line(tmp_path: Path) -> None:
    # Codex's placement; but after a change that took that blank line, at the end.
    (tmp_path / "a.txt").write_text("x\n\n")
    apply(tmp_path, patch("*** Update File: a.txt", "@@", "+y"))
    assert (tmp_path / "a.txt").read_text() == "x\ny\n\n"
    apply(tmp_path, patch("*** Update File: a.txt", "@@", " y", "-", "@@", "+z"))
    assert (tmp_path / "a.txt").read_text() == "x\ny\nz\n"
