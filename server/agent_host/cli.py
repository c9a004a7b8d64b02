"""Command line: ``agent-host serve | exec | demo | apply-patch | fake-model``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _apply_patch(args: argparse.Namespace) -> int:
    from agent_host.tools.apply_patch import main as apply_patch_main

    return apply_patch_main(sys.stdin.buffer.read(), ".")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-host", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    patch = sub.add_parser(
        "apply-patch",
        help="apply a *** Begin Patch patch read on stdin in the current directory",
    )
    patch.set_defaults(run=_apply_patch)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))
