"""``agentls sessions``: this workspace's stored sessions, read straight from
the store (no server needed), and ``agentls sessions delete ID``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from agentls.sessions.paths import workspace_folder
from agentls.sessions.store import SessionBusy, SessionNotFound, SessionStore

SHORT = 12  # characters of an id shown in the table (any unique prefix of 8 or more works)


def run_sessions(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace or os.getcwd()).resolve()
    store = SessionStore(workspace_folder(workspace), workspace=workspace)
    if args.action == "delete":
        return _delete(store, args.session)
    sessions = store.list()
    if args.json:
        print(json.dumps([info.as_json() for info in sessions], indent=2))
        return 0
    if not sessions:
        print(f"no sessions for {workspace}", file=sys.stderr)
        return 0
    now = time.time()
    print(f"{'SESSION':<{SHORT}}  {'UPDATED':>9}  {'TURNS':>5}  TITLE")
    for info in sessions:
        when = age(now - info.modified)
        print(f"{info.session_id[:SHORT]}  {when:>9}  {info.turns:>5}  {info.title}")
    print("\ncontinue one: agentls exec --resume ID|last PROMPT", file=sys.stderr)
    return 0


def resolve(sessions: list[dict[str, object]], wanted: str) -> str | None:
    """The id of ``wanted`` ("last", a full id or a unique prefix of 8 or more)."""
    ids = [str(s["sessionId"]) for s in sessions if not s.get("error")]
    if wanted == "last":
        return ids[0] if ids else None
    matches = [i for i in ids if i == wanted or (len(wanted) >= 8 and i.startswith(wanted))]
    return matches[0] if len(matches) == 1 else None


def _delete(store: SessionStore, wanted: str) -> int:
    listed = [info.as_json() for info in store.list()]
    session_id = resolve(listed, wanted) or wanted
    try:
        store.delete(session_id)
    except (SessionNotFound, SessionBusy) as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return 1
    print(f"deleted session {session_id}", file=sys.stderr)
    return 0


def age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"
