"""`recollect demo`: a scripted, multi-session conversation that shows the memory at work.

Each turn prints what the model was sent (tokens per category) and what left the verbatim
window. The second session reopens the database from scratch, as a restarted process would.
"""

from __future__ import annotations

import argparse
import textwrap
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import RemoveMessage
from langchain_core.runnables import RunnableConfig

from recollect.cli.demo_ranking import show_ranking
from recollect.graphs.agent import make_graph, thread_config, user_turn
from recollect.memory.models import describe_model
from recollect.memory.persistence import open_persistence
from recollect.state.context import Context

DEMO_HISTORY_TOKENS = 220  # small on purpose, so trimming shows within a few turns


@dataclass(frozen=True)
class Session:
    """A run of turns in one process lifetime."""

    title: str
    turns: tuple[str, ...]


SESSIONS: tuple[Session, ...] = (
    Session(
        "Session 1: a new conversation",
        (
            "Hi! I'm Dana, I lead the payments team and we're migrating our dashboard.",
            "Our frontend is React 16 and we deploy to Kubernetes on GCP.",
            "My order 8842-B was charged twice, $249.00 each time; email dana@example.com.",
            "Please keep answers short, and never suggest jQuery.",
            "What should we check first when upgrading React?",
        ),
    ),
    Session(
        "Session 2: the same thread after a restart",
        (
            "We moved to React 19 last week, by the way.",
            "Can you remind me what we were doing?",
        ),
    ),
)


def register(commands: Any) -> None:
    """Add the `demo` sub-command."""
    parser = commands.add_parser("demo", help="run a scripted multi-session conversation")
    parser.add_argument("--user", default=None, help="user id (default: a fresh demo user)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Play every session; each opens its own pool and checkpointer, like a new process."""
    print(describe_model(), flush=True)
    user = args.user or f"demo-{uuid.uuid4().hex[:6]}"
    thread = f"{user}-thread"
    ctx = Context(user_id=user, max_history_tokens=DEMO_HISTORY_TOKENS)
    print(f"user: {user}  thread: {thread}  history budget: {DEMO_HISTORY_TOKENS} tokens")
    for session in SESSIONS:
        _banner(session.title)
        with open_persistence(announce=False) as persistence:
            agent = make_graph(checkpointer=persistence.checkpointer)
            config = thread_config(thread)
            before = len(agent.get_state(config).values.get("messages", []))
            print(f"(thread has {before} checkpointed messages)")
            for turn in session.turns:
                _play_turn(agent, config, ctx, turn)
            after = agent.get_state(config).values.get("messages", [])
            print(f"\n(session ends; {len(after)} messages remain in the checkpoint)")
    _banner("How long-term recall ranks")
    show_ranking()
    return 0


def _play_turn(agent: Any, config: RunnableConfig, ctx: Context, text: str) -> None:
    print(f"\nyou> {text}")
    trimmed: list[str] = []
    tokens: dict[str, int] = {}
    reply = ""
    for update in agent.stream(
        user_turn(text),
        config=config,
        context=ctx,
        stream_mode="updates",
    ):
        for node, change in update.items():
            if not change:
                continue
            if node == "trim":
                removed = change.get("messages", [])
                trimmed += [str(m.id) for m in removed if isinstance(m, RemoveMessage)]
            if node == "call_model":
                tokens = change.get("context_tokens", {})
                reply = change["messages"][-1].text
    print(textwrap.indent(textwrap.shorten(reply, 400, placeholder=" …"), "assistant> "))
    sent = ", ".join(f"{k}={v}" for k, v in tokens.items() if k != "total")
    print(f"  · tokens sent: {tokens.get('total', 0)} ({sent})")
    if trimmed:
        print(f"  · trimmed from the checkpoint: {len(trimmed)} older message(s)")


def _banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 60 - len(title)))
