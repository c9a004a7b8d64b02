"""Where agentls's server spends its time during one figure.

``python -m bench --profile FIGURE`` (``make bench-profile FIGURE=...``) runs
that figure for agentls alone with py-spy attached to the server process
(``py-spy record --format raw --function``), then ranks the samples:

* by the deepest agentls frame of each sample and the function that was
  actually running (``relay.forward → json.dumps``);
* by inclusive share of each agentls function;
* by the leaf function (self time), whatever its package.

``--profile cancel`` adds a cProfile of the cancel path alone, in-process
(``cancel_probe.py``). ``--profile startup`` instead runs the server with ``python -X importtime``
until ``initialize`` is answered, and ranks the imports.

Writes ``bench/profiles/FIGURE.txt`` (the summary, committed) and keeps the raw
samples under ``bench/out/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.assemble import _commit
from bench.figures import Run, Sizes
from bench.report import markdown

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")


def _py_spy() -> str | None:
    candidate = Path(sys.executable).with_name("py-spy")
    if candidate.exists():
        return str(candidate)
    return shutil.which("py-spy")


def short(frame: str) -> str:
    """``func (pkg/module.py:12)`` → ``pkg.module.func``."""
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    func, path = match.group("func"), match.group("file")
    if path.startswith("<"):
        return f"{path.strip('<>')}.{func}"
    parts = list(Path(path).with_suffix("").parts)
    for anchor in ("site-packages", "agentls"):
        if anchor in parts:
            index = parts.index(anchor)
            parts = parts[index + 1 :] if anchor == "site-packages" else parts[index:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([*parts, func])


def ours(name: str) -> bool:
    return name.startswith("agentls.")


def summarize(raw: Path, title: str) -> str:
    stacks: list[tuple[list[str], int]] = []
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, samples = line.rpartition(" ")
        if not stack or not samples.isdigit():
            continue
        frames = [short(f) for f in stack.split(";") if f]
        stacks.append((frames, int(samples)))
    total = sum(count for _, count in stacks) or 1
    pairs: Counter[str] = Counter()
    entries: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    packages: Counter[str] = Counter()
    for frames, count in stacks:
        leaf = frames[-1] if frames else "?"
        leaves[leaf] += count
        packages[leaf.split(".", 1)[0].split(" ", 1)[0]] += count
        depth = next((i for i in range(len(frames) - 1, -1, -1) if ours(frames[i])), None)
        owner = None if depth is None else frames[depth]
        if depth is not None and depth + 1 < len(frames):
            entries[f"{owner} → {frames[depth + 1]}"] += count
        if owner is None:
            pairs[f"(no agentls frame) → {leaf}"] += count
        elif owner == leaf:
            pairs[f"{owner} (itself)"] += count
        else:
            pairs[f"{owner} → {leaf}"] += count
        for name in set(frames):
            if ours(name):
                inclusive[name] += count

    def table(counter: Counter[str], n: int) -> list[str]:
        return [f"  {100 * c / total:5.1f}%  {name}" for name, c in counter.most_common(n)]

    return "\n".join(
        [
            title,
            f"{total} samples (py-spy, --function; a sample is one running thread)",
            "",
            "Deepest agentls frame → the function running (where the CPU went, and who asked):",
            *table(pairs, 25),
            "",
            "Deepest agentls frame → the call it made into a library (inclusive):",
            *table(entries, 15),
            "",
            "agentls functions, inclusive:",
            *table(inclusive, 25),
            "",
            "Leaf functions (self time), any package:",
            *table(leaves, 20),
            "",
            "Leaf time by top-level package:",
            *table(packages, 12),
            "",
        ]
    )


def resummarize(figure: str, out_dir: Path) -> int:
    """Redo ``profiles/FIGURE.txt`` from the raw samples kept in ``bench/out``."""
    raw = out_dir.parent / "out" / f"profile-{figure}.raw"
    target = out_dir / f"{figure}.txt"
    head = target.read_text().split("\n")[:3] if target.exists() else [figure]
    title = "\n".join(line for line in head if not line[:1].isdigit())
    target.write_text(summarize(raw, title))
    print(target.read_text())
    return 0


def profile(figure: str, sizes: Sizes, scratch: Path, out_dir: Path) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    if figure == "startup":
        text = asyncio.run(_importtime(scratch))
        (out_dir / "startup.txt").write_text(text)
        print(text)
        return 0
    py_spy = _py_spy()
    if py_spy is None:
        print("py-spy is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2
    raw = scratch / f"profile-{figure}.raw"
    run = Run(sizes, scratch, use_codex=False, install_codex=False, only={figure})
    # The figure itself only (the session's warm-up turn is not in the profile).
    run.on_server = _recorder(py_spy, raw, figure)
    results = asyncio.run(run.run())
    if not raw.exists():
        print("py-spy wrote nothing (is ptrace allowed here?)", file=sys.stderr)
        return 1
    figures = [f for f in results.figures if f.key == figure or figure == "first-delta"]
    measured = "\n".join(
        f"  {t.text}: {t.measured} (limit {t.limit}, {t.verdict})"
        for f in figures
        for t in f.targets
    )
    title = (
        f"Profile of agentls's server during the {figure} figure "
        f"({time.strftime('%Y-%m-%d %H:%M')}, commit {results.meta.get('commit')}). "
        "Measured while profiled (py-spy slows the server):\n" + measured
    )
    text = summarize(raw, title)
    if figure == "cancel":
        probe = subprocess.run(
            [sys.executable, str(Path(__file__).with_name("cancel_probe.py")), "20"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        text += (
            "\n\nThe cancel path alone, in-process (bench/cancel_probe.py; cProfile between "
            "TurnControl.cancel() and its receipt):\n\n"
            + _without_machine_paths(probe.stdout or probe.stderr)
        )
    (out_dir / f"{figure}.txt").write_text(text)
    (scratch / f"profile-{figure}-results.md").write_text(markdown(results))
    shutil.copy(raw, out_dir.parent / "out" / raw.name)
    print(text)
    return 0


def _without_machine_paths(text: str) -> str:
    """cProfile names files by absolute path: keep them relative (the
    checkout, the venv's packages, the interpreter's library), so the
    committed profile says nothing of this machine."""
    import site

    prefixes = [(str(Path(__file__).resolve().parents[1]) + "/", "")]
    prefixes += [(folder + "/", "site-packages/") for folder in site.getsitepackages()]
    prefixes.append((sys.base_prefix + "/", "<python>/"))
    for prefix, short in prefixes:
        text = text.replace(prefix, short)
    return text


def _importtime_rows(text: str) -> list[tuple[int, int, str]]:
    """``-X importtime`` lines as (self µs, cumulative µs, name with its indentation)."""
    rows = []
    for line in text.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line.split(":", 1)[1].split("|")
        if len(parts) == 3 and parts[0].strip().isdigit() and parts[1].strip().isdigit():
            rows.append((int(parts[0]), int(parts[1]), parts[2]))
    return rows


def _recorder(
    py_spy: str, raw: Path, figure: str
) -> Callable[[str, int], Awaitable[Callable[[], Awaitable[None]]]]:
    async def start(name: str, pid: int) -> Callable[[], Awaitable[None]]:
        if name != figure:

            async def nothing() -> None:
                return None

            return nothing
        proc = await asyncio.create_subprocess_exec(
            py_spy,
            "record",
            "--pid",
            str(pid),
            "--format",
            "raw",
            "--function",
            "--rate",
            "500",
            "--nonblocking",
            "--output",
            str(raw),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        await asyncio.sleep(0.5)  # let it attach

        async def stop() -> None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()

        return stop

    return start


async def _importtime(scratch: Path) -> str:
    """Which imports agentls pays for before it can answer ``initialize``."""
    from bench.agentls_server import SERVE, AgentlsServer
    from bench.fakehub import FakeHub

    log = scratch / "importtime.log"
    ws = scratch / "ws-importtime"
    ws.mkdir(parents=True, exist_ok=True)
    async with FakeHub() as hub:
        with log.open("wb") as stderr:
            session = await AgentlsServer.start(
                hub.base_url,
                ws,
                stderr,
                command=[SERVE[0], "-X", "importtime", *SERVE[1:]],
                home=scratch / "home",
            )
            spawn_to_init = (session.t_initialized_ns - session.client.t_spawn_ns) / 1e6
            boundary = log.stat().st_size  # what was imported before initialize was answered
            await asyncio.sleep(3)  # let the warm-up thread finish its imports
            await session.close()
    text = log.read_bytes()
    before = _importtime_rows(text[:boundary].decode(errors="replace"))
    after = _importtime_rows(text[boundary:].decode(errors="replace"))
    rows = before
    top = [(c, n.strip()) for _, c, n in rows if not n[1:].startswith(" ")]
    everything = sorted(((c, n.strip()) for _, c, n in rows), reverse=True)
    total_self = sum(s for s, _, _ in rows)
    by_package: Counter[str] = Counter()
    for self_us, _, name in rows:
        by_package[name.strip().split(".")[0]] += self_us
    later = sorted(((c, n.strip()) for _, c, n in after if not n[1:].startswith(" ")), reverse=True)
    lines = [
        "Startup profile: `python -X importtime -m agentls serve` until `initialize` "
        f"is answered ({spawn_to_init:.0f} ms under importtime, which slows imports; "
        f"{time.strftime('%Y-%m-%d %H:%M')}, commit {_commit()}).",
        f"Before initialize: {len(rows)} modules, {total_self / 1000:.0f} ms of import time.",
        "",
        "Top-level imports, in order (cumulative ms):",
        *(f"  {c / 1000:8.1f}  {n}" for c, n in top),
        "",
        "Largest imports anywhere (cumulative ms):",
        *(f"  {c / 1000:8.1f}  {n}" for c, n in everything[:30]),
        "",
        "Largest self times (ms; the module's own code, children excluded):",
        *(f"  {us / 1000:8.1f}  {name.strip()}" for us, _, name in sorted(rows, reverse=True)[:20]),
        "",
        "Import time by top-level package (self ms, summed):",
        *(f"  {us / 1000:8.1f}  {name}" for name, us in by_package.most_common(15)),
        "",
        f"After initialize (the warm-up thread), {len(after)} modules; top-level (cumulative ms):",
        *(f"  {c / 1000:8.1f}  {n}" for c, n in later[:15]),
        "",
    ]
    return "\n".join(lines)
