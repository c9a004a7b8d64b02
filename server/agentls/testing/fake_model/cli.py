"""``python -m agentls.testing.fake_model``: serve a scripted fake from a shell."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from .script import Reply, load_script
from .server import FakeModel, FakeModelOptions, log


async def _serve(replies: list[Reply], options: FakeModelOptions) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with FakeModel(*replies, **options) as fake:
        print(f"listening {fake.base_url}", flush=True)
        await stop.wait()
        log.info(
            "stopping; %d request(s) served (%d refused), %d reply(ies) left",
            len(fake.requests),
            sum(1 for request in fake.requests if request.refused),
            fake.pending,
        )


def _tokens(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a token count is >= 0")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m agentls.testing.fake_model",
        description="Serve a scripted fake of the OpenAI Responses API on 127.0.0.1.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free port)")
    parser.add_argument("--script", metavar="FILE.json", help="a JSON list of replies")
    parser.add_argument(
        "--strict",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="refuse, as the real API does, unknown parameters and tool calls without "
        "their outputs (or outputs without their calls); default: on",
    )
    parser.add_argument(
        "--context-window",
        type=_tokens,
        metavar="TOKENS",
        help="refuse input larger than this (context_length_exceeded); default: no limit",
    )
    parser.add_argument(
        "--reject-stored-item-ids",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="refuse input items that carry an id while store is false, as the real API "
        "does (404 Item not found); default: on",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="fake-model: %(message)s",
    )
    try:
        replies = load_script(args.script) if args.script else []
    except (OSError, ValueError) as exc:
        print(f"fake-model: cannot load script: {exc}", file=sys.stderr)
        return 2
    options: FakeModelOptions = {
        "host": args.host,
        "port": args.port,
        "strict": args.strict,
        "context_window": args.context_window,
        "reject_stored_item_ids": args.reject_stored_item_ids,
    }
    asyncio.run(_serve(replies, options))
    return 0
