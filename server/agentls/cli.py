"""Command line: ``agentls serve | exec | sessions | demo | apply-patch``.

Imports are local to each command: ``serve`` must answer ``initialize``
quickly, so it never pays for what only ``exec`` or ``demo`` need.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agentls import __version__
from agentls.domain import APPROVALS, DEFAULT_APPROVAL, DEFAULT_SANDBOX, SANDBOXES


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT or PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def _serve(args: argparse.Namespace) -> int:
    if args.reattach:  # a bridge: nothing of the server is loaded here
        from pathlib import Path

        from agentls.client.bridge import run_bridge

        return run_bridge(Path.cwd(), args.linger, args.log_level)
    from agentls.config import claim_api_key
    from agentls.lsp import logs

    # First: from here on the key lives in our memory only, not in our environment.
    claim_api_key()

    logs.configure(args.log_level, args.log_file)
    from agentls.lsp.app import AgentServer, ServerOptions
    from agentls.lsp.transport import serve_stdio, serve_tcp, serve_ws

    address = args.tcp or args.ws
    if address is not None and not _loopback(address[0]) and not args.allow_remote:
        print(
            f"refusing to listen on {address[0]}: only loopback addresses are allowed "
            "unless you pass --allow-remote",
            file=sys.stderr,
        )
        return 2
    if args.token is not None:
        print(
            "agentls: --token is not accepted (every process can read a command line): "
            "put the token in a file for --token-file, or in $AGENTLS_TOKEN",
            file=sys.stderr,
        )
        return 2
    if args.allow_origin and args.ws is None:
        print("--allow-origin is for --ws only", file=sys.stderr)
        return 2
    token: str | None = None
    generated = False
    if address is not None:
        # Imported here: stdio, what editors use, need not pay for it.
        from agentls.lsp import tokens

        # Any local process (any web page, for --ws) can reach the port: a
        # client must always present the token.
        try:
            token = tokens.given_token(args.token_file)
        except tokens.TokenError as exc:
            print(f"agentls: {exc}", file=sys.stderr)
            return 2
        if token is None:
            token, generated = tokens.generate(), True
    options = ServerOptions(
        log_level=args.log_level,
        token=token,
        publish_token=generated,
        allowed_origins=tuple(args.allow_origin or ()),
    )
    server = AgentServer(options)
    _bridge_logs(server)
    if args.listen is not None:
        from pathlib import Path

        from agentls.lsp.attach import serve_listen
        from agentls.lsp.transport import _limit

        limit = _limit()
        if limit is None:
            return 2
        return serve_listen(server, Path(args.listen), args.linger, limit)
    if args.tcp is not None:
        return serve_tcp(server, *args.tcp)
    if args.ws is not None:
        return serve_ws(server, *args.ws)
    return serve_stdio(server)


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _bridge_logs(server: object) -> None:
    import logging

    from agentls.config import api_key
    from agentls.lsp.app import AgentServer
    from agentls.lsp.logs import ClientLogHandler

    assert isinstance(server, AgentServer)

    def secret() -> str | None:
        return api_key()

    def send(params: object) -> None:
        if server.started:
            server.window_log_message(params)  # type: ignore[arg-type]

    logging.getLogger("agentls").addHandler(ClientLogHandler(send, secret))


def _apply_patch(args: argparse.Namespace) -> int:
    from agentls.tools.apply_patch import main as apply_patch_main

    return apply_patch_main(sys.stdin.buffer.read(), ".")


def _exec(args: argparse.Namespace) -> int:
    from agentls.client.exec import run_exec

    return run_exec(args)


def _sessions(args: argparse.Namespace) -> int:
    from agentls.client.sessions import run_sessions

    return run_sessions(args)


def _demo(args: argparse.Namespace) -> int:
    from agentls.demo import run_demo

    return run_demo(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls",
        description="A coding agent that lives inside the editor.",
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve", help="run the language server (stdio by default)", allow_abbrev=False
    )
    where = serve.add_mutually_exclusive_group()
    where.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    where.add_argument("--tcp", type=_address, metavar="HOST:PORT", help="serve one client on TCP")
    where.add_argument(
        "--ws", type=_address, metavar="HOST:PORT", help="serve one client on WebSocket"
    )
    where.add_argument(
        "--listen",
        metavar="SOCKET",
        help="serve editors one after another on a Unix socket; the agents outlive a "
        "disconnected editor for --linger seconds (an editor that reloads attaches again)",
    )
    where.add_argument(
        "--reattach",
        action="store_true",
        help="on stdio, through this workspace's --listen server (started if none runs): "
        "the server survives the editor's restart",
    )
    serve.add_argument(
        "--linger",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="with --listen/--reattach: how long the server waits for an editor (default 120)",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow --tcp/--ws on a non-loopback address",
    )
    serve.add_argument(
        "--token-file",
        metavar="PATH",
        help="--tcp/--ws: the token clients must send as initializationOptions.token "
        "(default: $AGENTLS_TOKEN, else a new one, written to the state folder)",
    )
    # Gone: a token on the command line is visible to every process of the machine.
    serve.add_argument("--token", help=argparse.SUPPRESS)
    serve.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="--ws: a browser origin (https://host:port) allowed to connect; "
        "connections from any other web page are refused",
    )
    serve.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    serve.add_argument("--log-file", help="log here instead of stderr")
    serve.set_defaults(run=_serve)

    run = sub.add_parser("exec", help="run one turn in the current directory and print it")
    # "*", not "+": with --resume, the prompt's first word may have been taken for an id.
    run.add_argument("prompt", nargs="*", help="what to ask the agent")
    run.add_argument("--model", help="model name (default: $AGENTLS_MODEL or gpt-5.1-codex)")
    run.add_argument("--base-url", help="Responses API base URL (default: $OPENAI_BASE_URL)")
    run.add_argument("--effort", choices=["none", "minimal", "low", "medium", "high", "xhigh"])
    run.add_argument("--fast", action="store_true", help="fast mode (priority service tier)")
    run.add_argument("--workspace", help="directory to work in (default: the current one)")
    run.add_argument(
        "--approval",
        choices=APPROVALS,
        default=DEFAULT_APPROVAL,
        help="when to ask before a tool call (default: %(default)s: sandboxed commands run, "
        "the rest asks on the terminal)",
    )
    run.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default=DEFAULT_SANDBOX,
        help="where commands run (default: %(default)s; off: as you, unsandboxed)",
    )
    run.add_argument(
        "--network", action="store_true", help="let sandboxed commands use the network"
    )
    run.add_argument(
        "--resume",
        nargs="?",
        const="last",
        metavar="ID|last",
        help="continue a stored session of this workspace (default: the last one); "
        "see `agentls sessions`",
    )
    run.set_defaults(run=_exec)

    sessions = sub.add_parser("sessions", help="list (or delete) this workspace's sessions")
    sessions.add_argument("--workspace", help="whose sessions (default: the current directory)")
    sessions.add_argument("--json", action="store_true", help="print them as JSON")
    actions = sessions.add_subparsers(dest="action")
    delete = actions.add_parser("delete", help="delete one session")
    delete.add_argument("session", metavar="ID", help="its id, or a unique prefix of 8 or more")
    sessions.set_defaults(run=_sessions)

    demo = sub.add_parser("demo", help="a scripted session on an example repository, offline")
    demo.add_argument("--keep", action="store_true", help="keep the example repository afterwards")
    demo.set_defaults(run=_demo)

    patch = sub.add_parser(
        "apply-patch",
        help="apply a *** Begin Patch patch read on stdin in the current directory",
    )
    patch.set_defaults(run=_apply_patch)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))
