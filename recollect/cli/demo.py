"""`recollect demo`: a scripted, multi-session conversation that shows the memory at work.

Each turn prints what the model was sent (tokens per category), what left the verbatim
window, and what long-term memory recalled. The second session reopens the database from
scratch, as a restarted process would; the third starts a new thread, so everything it knows
comes from long-term memory. Facts are written here with `LongTermMemory.remember`, standing in
for the background extraction job.
"""

from __future__ import annotations

import argparse
import textwrap
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import RemoveMessage
from langchain_core.runnables import RunnableConfig

from recollect.graphs.agent import make_graph, thread_config, user_turn
from recollect.memory.facts import LongTermMemory
from recollect.memory.models import describe_model
from recollect.memory.persistence import open_persistence
from recollect.state.context import Context
from recollect.state.memory import FactCategory, NewFact, ProfileEntry, RememberAction
from recollect.state.scope import Scope

DEMO_HISTORY_TOKENS = 220  # small on purpose, so trimming shows within a few turns


@dataclass(frozen=True)
class Session:
    """A run of turns in one process lifetime."""

    title: str
    turns: tuple[str, ...]
    new_thread: bool = False


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
    Session(
        "Session 3: a new thread, long-term memory only",
        ("Which frontend framework are we on, and how do we deploy?",),
        new_thread=True,
    ),
)

_STACK = FactCategory.TECHNICAL_STACK
REMEMBERED: dict[str, tuple[NewFact | ProfileEntry, ...]] = {
    SESSIONS[0].turns[0]: (
        ProfileEntry(key="name", value="Dana"),
        ProfileEntry(key="role", value="leads the payments team"),
    ),
    SESSIONS[0].turns[1]: (
        NewFact(text="Frontend is React 16", category=_STACK, subject="frontend_framework",
                confidence=0.9),
        NewFact(text="Deploys to Kubernetes on GCP", category=_STACK, subject="deploy_platform",
                confidence=0.9),
    ),
    SESSIONS[0].turns[3]: (
        NewFact(text="Wants short answers", category=FactCategory.PREFERENCE, confidence=0.9),
        NewFact(text="Never suggest jQuery", category=FactCategory.PREFERENCE, confidence=0.9),
    ),
    SESSIONS[1].turns[0]: (
        NewFact(text="Frontend moved to React 19", category=_STACK, subject="frontend_framework",
                confidence=0.7),
    ),
}  # fmt: skip
"""What the background memory job would extract from these turns."""


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
    print("long-term memory: Postgres full-text recall (no embedder configured)")
    scope = Scope.for_user(ctx.org_id, ctx.user_id)
    for session in SESSIONS:
        _banner(session.title)
        if session.new_thread:
            thread = f"{user}-new-thread"
            print(f"thread: {thread}")
        with open_persistence(announce=False) as persistence:
            memory = LongTermMemory(persistence.pool)
            agent = make_graph(checkpointer=persistence.checkpointer, memory=memory)
            config = thread_config(thread)
            before = len(agent.get_state(config).values.get("messages", []))
            print(f"(thread has {before} checkpointed messages)")
            for turn in session.turns:
                _play_turn(agent, config, ctx, turn)
                _remember(memory, scope, REMEMBERED.get(turn, ()))
            after = agent.get_state(config).values.get("messages", [])
            print(f"\n(session ends; {len(after)} messages remain in the checkpoint)")
    return 0


def _play_turn(agent: Any, config: RunnableConfig, ctx: Context, text: str) -> None:
    print(f"\nyou> {text}")
    trimmed: list[str] = []
    recalled: list[Any] = []
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
            if node == "recall":
                recalled = change.get("recalled", [])
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
    for item in recalled[:6]:
        when = f"({item['learned_at'][:10]}) " if item["kind"] != "profile" else ""
        print(f"  · recalled [{item['kind']}] {when}{item['text']}  score={item['score']:.2f}")


def _remember(
    memory: LongTermMemory, scope: Scope, items: tuple[NewFact | ProfileEntry, ...]
) -> None:
    profile = [item for item in items if isinstance(item, ProfileEntry)]
    if profile:
        memory.set_profile(scope, profile)
        print("  · profile: " + ", ".join(f"{p.key}={p.value}" for p in profile))
    for item in items:
        if not isinstance(item, NewFact):
            continue
        result = memory.remember(scope, item)
        print(f"  · remembered [{item.category}] {item.text} ({result.action})")
        if result.action is RememberAction.SUPERSEDED:
            old = {f.id: f.text for f in memory.facts(scope, include_superseded=True)}
            for fact_id in result.replaced:
                print(f"  · superseded: {old[fact_id]!r} → {result.fact.text!r}")


def _banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 60 - len(title)))
