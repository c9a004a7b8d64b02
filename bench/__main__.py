"""``python -m bench [--smoke] [--out DIR] [--only FIG,...] [--no-codex] [--baseline REV]
[--profile FIG]``."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.figures import Run, Sizes
from bench.report import markdown, plot, update_docs, write_json

BENCH = Path(__file__).resolve().parent
FIGURES = (
    "startup",
    "first-delta",
    "submit",
    "throughput",
    "cancel",
    "fork",
    "memory",
    "load",
    "sandbox",
    "mcp",
    "sessions",
    "edits",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, no target checks (for the test suite)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="where results.{md,json,png} go (default: bench/, smoke: bench/out/smoke)",
    )
    parser.add_argument("--only", help=f"comma-separated figures: {', '.join(FIGURES)}")
    parser.add_argument("--no-codex", action="store_true", help="leave Codex out")
    parser.add_argument(
        "--install-codex",
        choices=("auto", "yes", "no"),
        default="auto",
        help="npm-install Codex into the cache if missing (auto: yes, except in smoke runs)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also run agentls at git revision REV, beside this checkout, in the same run "
        "(first delta, submit, throughput, cancel: before and after side by side)",
    )
    parser.add_argument(
        "--profile",
        choices=("first-delta", "throughput", "cancel", "load", "startup"),
        help="profile agentls's server during this figure (py-spy; startup: -X importtime) "
        "instead of a full run",
    )
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(FIGURES):
        parser.error(f"unknown figure(s): {', '.join(sorted(only - set(FIGURES)))}")
    sizes = Sizes.smoke_sizes() if args.smoke else Sizes.full()
    out = args.out or (BENCH / "out" / "smoke" if args.smoke else BENCH)
    out.mkdir(parents=True, exist_ok=True)
    (BENCH / "out").mkdir(exist_ok=True)
    # Logs and workspaces of this run; removed when it succeeds.
    scratch = Path(tempfile.mkdtemp(prefix="run-", dir=BENCH / "out"))

    if args.profile:
        from bench.profiling import profile

        code = profile(args.profile, Sizes.full(), scratch, BENCH / "profiles")
        shutil.rmtree(scratch, ignore_errors=True)
        return code

    install = {"auto": not args.smoke, "yes": True, "no": False}[args.install_codex]
    baseline = None
    if args.baseline:
        from bench import baseline as baselines

        baseline = baselines.export(args.baseline, scratch)
        print(f"bench: baseline {baselines.describe(args.baseline)}", file=sys.stderr)
    run = Run(
        sizes,
        scratch,
        use_codex=not args.no_codex,
        install_codex=install,
        only=only,
        baseline=baseline,
    )
    t0 = time.monotonic()
    try:
        results = asyncio.run(run.run())
    except BaseException:
        print(f"bench: failed; the servers' logs are in {scratch / 'logs'}", file=sys.stderr)
        raise
    (out / "results.md").write_text(markdown(results))
    write_json(results, out / "results.json")
    why_not = plot(results, out / "results.png")
    if why_not:
        print(f"bench: no plot: {why_not}", file=sys.stderr)
    if out.resolve() == BENCH and not args.smoke and only is None:
        update_docs(results, BENCH.parent / "docs" / "performance.md")
    missed = [t for f in results.figures for t in f.targets if t.met is False]
    print(
        f"bench: wrote {out / 'results.md'} in {time.monotonic() - t0:.0f} s; "
        f"{len(missed)} target(s) missed",
        file=sys.stderr,
    )
    for target in missed:
        print(f"  MISSED {target.text}: {target.measured} (limit {target.limit})", file=sys.stderr)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
