"""Renders the Neovim client for the docs: ``make nvim-screenshot``.

A real Neovim (the TUI, 0.11 from the test cache) runs in a real terminal
(a detached tmux session) with the plugin, the real server and the scripted
model of ``agentls demo`` on a temporary copy of its example repository;
``tests/nvim/screenshot.lua`` sets the scene through the plugin's keymaps.
When the screen shows it, ``tmux capture-pane -e`` gives the cells with their
colours (24-bit SGR), which become an HTML grid that headless Chromium
screenshots to a PNG. Nothing is drawn by hand: every cell is Neovim's.

Needs tmux and Chromium (``make vscode-e2e-tools`` installs Chromium).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from copy import copy
from dataclasses import dataclass
from pathlib import Path

from agentls.demo import PROMPT, copy_example, scripted_model
from agentls.testing.fake_model import run_in_thread

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "editors" / "neovim"
SCENE = Path(__file__).resolve().parent / "nvim" / "screenshot.lua"
CACHE = Path(os.environ.get("AGENTLS_E2E_CACHE", Path.home() / ".cache" / "agentls-e2e"))
COLUMNS, ROWS = 160, 50
WAIT = 90.0
# Neovim's default colorscheme: what a cell without a colour of its own shows.
DEFAULT_FG, DEFAULT_BG = "#e0e2ea", "#14161b"
# The scene is set when the compose buffer shows its draft and the hint.
READY = ("Then check #diagnostics", "✓ Completed")
# The xterm palette for the 16 indexed colours (the rest come from the 6x6x6
# cube and the grey ramp).
PALETTE16 = [
    "#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
    "#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff",
]  # fmt: skip


@dataclass
class Style:
    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False


def indexed(n: int) -> str:
    if n < 16:
        return PALETTE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return f"#{steps[n // 36]:02x}{steps[n // 6 % 6]:02x}{steps[n % 6]:02x}"
    grey = 8 + (n - 232) * 10
    return f"#{grey:02x}{grey:02x}{grey:02x}"


FLAGS = {1: "bold", 3: "italic", 4: "underline", 7: "reverse"}


def apply_sgr(style: Style, params: list[int]) -> Style:
    """One SGR sequence (``ESC [ ... m``) applied to a style."""
    new = copy(style)
    i = 0
    if not params:
        params = [0]
    while i < len(params):
        p = params[i]
        if p == 0:
            new = Style()
        elif p in FLAGS or p - 21 in FLAGS:  # 22, 23, 24, 27 turn them off
            setattr(new, FLAGS.get(p) or FLAGS[p - 21], p in FLAGS)
        elif p in (38, 48) and i + 1 < len(params):
            if params[i + 1] == 2 and i + 4 < len(params):
                colour = "#{:02x}{:02x}{:02x}".format(*params[i + 2 : i + 5])
                i += 4
            elif params[i + 1] == 5 and i + 2 < len(params):
                colour = indexed(params[i + 2])
                i += 2
            else:
                break
            setattr(new, "fg" if p == 38 else "bg", colour)
        elif p in (39, 49):
            setattr(new, "fg" if p == 39 else "bg", None)
        elif 30 <= p <= 37 or 90 <= p <= 97:
            new.fg = PALETTE16[p - 30 if p < 90 else p - 82]
        elif 40 <= p <= 47 or 100 <= p <= 107:
            new.bg = PALETTE16[p - 40 if p < 100 else p - 92]
        i += 1
    return new


SGR = re.compile(r"\x1b\[([0-9;:]*)m")


def cells(line: str, style: Style) -> Iterator[tuple[str, Style]]:
    """The characters of one captured line with their styles (the style
    carries over from line to line, as in the terminal)."""
    pos = 0
    for match in SGR.finditer(line):
        for ch in line[pos : match.start()]:
            yield ch, style
        params = [int(p) if p else 0 for p in re.split("[;:]", match.group(1))]
        style = apply_sgr(style, params)
        pos = match.end()
    for ch in line[pos:]:
        yield ch, style
    yield "", style  # the style at the end of the line, for the next one


def css(style: Style) -> str:
    fg, bg = style.fg or DEFAULT_FG, style.bg or DEFAULT_BG
    if style.reverse:
        fg, bg = bg, fg
    rules = [f"color:{fg}", f"background:{bg}"]
    if style.bold:
        rules.append("font-weight:bold")
    if style.italic:
        rules.append("font-style:italic")
    if style.underline:
        rules.append("text-decoration:underline")
    return ";".join(rules)


def to_html(capture: str, columns: int) -> str:
    """The captured screen as an HTML grid: every cell one character wide
    (characters from fallback fonts get a box of exactly one cell)."""
    rows: list[str] = []
    style = Style()
    for line in capture.split("\n"):
        parts: list[str] = []
        width = 0
        for ch, cell_style in cells(line, style):
            style = cell_style
            if not ch:
                continue
            text = html.escape(ch)
            if ord(ch) > 0x7F:
                text = f'<span class="c">{text}</span>'
            parts.append(f'<span style="{css(style)}">{text}</span>')
            width += 1
        # The rest of the row in the background of its last cell (Neovim
        # clears to the end of a line with it).
        if width < columns:
            parts.append(f'<span style="{css(style)}">{" " * (columns - width)}</span>')
        rows.append("<div>" + "".join(parts) + "</div>")
    return (
        "<!doctype html><meta charset=utf-8><style>"
        f"body{{margin:0;background:{DEFAULT_BG}}}"
        "#screen{font:15px/19px 'DejaVu Sans Mono',monospace;white-space:pre;"
        f"width:{columns}ch;padding:8px}}"
        "#screen div{height:19px}"
        ".c{display:inline-block;width:1ch;overflow:visible}"
        "</style><div id=screen>" + "".join(rows[:ROWS]) + "</div>"
    )


def tmux(socket: str, *args: str) -> str:
    return subprocess.run(
        ["tmux", "-u", "-L", socket, "-f", os.devnull, *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout


def capture_scene(nvim: Path, work: Path) -> str:
    """Runs the scene in tmux; returns the screen (with SGR sequences) once
    it is set and steady."""
    repo = copy_example(work)
    (repo / ".git").mkdir()  # the workspace root's marker
    home = work / "home"
    home.mkdir()
    socket = f"agentls-shot-{os.getpid()}"
    with run_in_thread() as model:
        model.on_request(scripted_model)
        env = {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "TERM": "tmux-256color",
            "LANG": "C.UTF-8",
            "COLORTERM": "truecolor",
            "AGENTLS_PLUGIN": str(PLUGIN),
            "AGENTLS_SERVER": json.dumps([str(Path(sys.executable).parent / "agentls"), "serve"]),
            "AGENTLS_BASE_URL": model.base_url,
            "AGENTLS_PROMPT": PROMPT,
            "AGENTLS_WAIT_MS": str(int(WAIT * 1000)),
        }
        exports = [f"{k}={v}" for k, v in {"PATH": os.environ["PATH"], **env}.items()]
        scene = [str(nvim), "-i", "NONE", "-u", str(SCENE), "stats.py"]
        command = "exec " + shlex.join(["env", "-i", *exports, *scene])
        tmux(
            socket,
            "new-session",
            "-d",
            "-x",
            str(COLUMNS),
            "-y",
            str(ROWS),
            "-c",
            str(repo),
            command,
        )
        try:
            tmux(socket, "set-option", "-g", "status", "off")
            deadline = time.monotonic() + WAIT
            last = ""
            while time.monotonic() < deadline:
                screen = tmux(socket, "capture-pane", "-p", "-e", "-N")
                # Steady: the same screen twice in a row, showing the scene.
                if screen == last and all(marker in SGR.sub("", screen) for marker in READY):
                    return screen
                last = screen
                time.sleep(0.5)  # polling the screen, not synchronising a test
            plain = SGR.sub("", last)
            raise SystemExit(f"the scene was not set within {WAIT:.0f} s; the screen:\n{plain}")
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], check=False, timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=REPO / "docs" / "images" / "neovim-transcript.png"
    )
    parser.add_argument("--nvim", type=Path, default=CACHE / "nvim-0.11" / "bin" / "nvim")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args(argv)
    for tool in ("tmux", args.chromium, str(args.nvim)):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is not installed")
    with tempfile.TemporaryDirectory(prefix="agentls-shot-") as temp:
        work = Path(temp)
        screen = capture_scene(args.nvim, work)
        page = work / "screen.html"
        page.write_text(to_html(screen, COLUMNS))
        # 15px DejaVu Sans Mono: 9.03 px a cell (with room to spare), 19 px a row, 8 px padding.
        size = f"{int(COLUMNS * 9.1) + 16},{ROWS * 19 + 16}"
        subprocess.run(
            [
                args.chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--window-size={size}",
                f"--screenshot={args.out.resolve()}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
