"""The line diff behind every applyEdit (its runs always rebuild the new text,
and a patch's few changes stay few on a long file) and the incremental
changes that come back from it."""

from __future__ import annotations

import copy
import random

from lsprotocol import types as lsp
from pygls.workspace import TextDocument

from agentls.lsp.documents import LspTextDocument
from agentls.tools.line_diff import LineChange, changed_runs


def rebuilt(old: list[str], runs: list[LineChange]) -> str:
    out: list[str] = []
    at = 0
    for run in runs:
        assert run.start >= at and run.end >= run.start, runs
        out += old[at : run.start]
        out.append(run.text)
        at = run.end
    return "".join(out + old[at:])


def test_runs_rebuild_the_new_text_whatever_the_lines() -> None:
    rnd = random.Random(16)
    pool = ["a\n", "b\n", "\n", "}\n", "c\r\n", "d"]
    for n in range(2000):
        old = [rnd.choice(pool) for _ in range(rnd.randint(0, 30))]
        if n % 3 == 0:  # moved blocks: anchors out of order
            new = old[:]
            rnd.shuffle(new)
        elif n % 3 == 1:  # unique lines, some changed
            old = [f"line {i}\n" for i in range(rnd.randint(0, 30))]
            new = [line if rnd.random() < 0.8 else f"changed {line}" for line in old]
        else:
            new = [rnd.choice(pool) for _ in range(rnd.randint(0, 30))]
        assert rebuilt(old, changed_runs(old, new)) == "".join(new), (old, new)


def test_a_ten_hunk_patch_on_a_long_file_is_ten_runs() -> None:
    old = [f"value_{i:05d} = {i}\n" for i in range(5000)]
    new = old[:]
    for i in range(250, 5000, 500):
        new[i] = f"value_{i:05d} = 0\n"
    runs = changed_runs(old, new)
    assert [(r.start, r.end) for r in runs] == [(i, i + 1) for i in range(250, 5000, 500)]


def test_a_moved_block_is_a_delete_and_an_insert() -> None:
    old = [f"{i}\n" for i in range(10)]
    new = old[5:] + old[:5]
    runs = changed_runs(old, new)
    assert rebuilt(old, runs) == "".join(new)
    assert sum(r.end - r.start for r in runs) == 5, runs


def test_incremental_changes_land_where_pygls_puts_them() -> None:
    """The documents apply a change by slicing; the text is pygls's own for
    every valid range (UTF-16 columns, astral characters, CR LF, past the end)."""
    rnd = random.Random(16)
    pool = ["ab", "\n", "é", "𝄞", "x\r\n", "cd\r", "  "]
    checked = 0
    for _ in range(3000):
        source = "".join(rnd.choice(pool) for _ in range(rnd.randint(0, 20)))
        theirs, ours = TextDocument("file:///a", source), LspTextDocument("file:///a", source)
        lines = theirs.lines
        sl = rnd.randint(0, len(lines) + 1)
        el = rnd.randint(sl, len(lines) + 1)
        sc = rnd.randint(0, 6)
        ec = rnd.randint(0, 6) if el != sl else rnd.randint(sc, 8)
        where = lsp.Range(
            start=lsp.Position(line=sl, character=sc), end=lsp.Position(line=el, character=ec)
        )
        server = theirs._position_codec.range_from_client_units(lines, copy.deepcopy(where))
        s, e = server.start, server.end
        if s.line == e.line < len(lines) and min(s.character, len(lines[s.line])) > min(
            e.character, len(lines[e.line])
        ):
            continue  # a reversed range: pygls writes the text twice, ours once
        text = rnd.choice(["", "Z", "q\n", "w\r\n"])
        theirs.apply_change(lsp.TextDocumentContentChangePartial(range=where, text=text))
        ours.apply_change(
            lsp.TextDocumentContentChangePartial(range=copy.deepcopy(where), text=text)
        )
        assert ours.source == theirs.source, (source, where, text)
        checked += 1
    assert checked > 2000
