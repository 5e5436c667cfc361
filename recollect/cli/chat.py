"""`recollect chat`: a REPL over stdin; every turn is checkpointed before the reply prints."""

from __future__ import annotations

import argparse
import sys
import uuid
from typing import Any

from graphs.agent import make_graph, thread_config, user_turn
from recollect.extraction.episodes import checkpoint_reader, end_session
from recollect.extraction.worker import Worker, start_background
from recollect.history.persistence import open_persistence
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.models.factory import describe_model
from recollect.store.scope import Scope
from recollect.store.threads import claim_thread
from state.context import Context

EXIT_WORDS = {"/exit", "/quit"}
END_WORD = "/end"
"""Ends the session: its episode is written now, and the chat starts a fresh thread."""


def register(commands: Any) -> None:
    """Add the `chat` sub-command."""
    parser = commands.add_parser("chat", help="talk to the agent; the thread survives restarts")
    parser.add_argument("--user", required=True, help="user id (memory is per user)")
    parser.add_argument("--org", default=None, help="organisation id (default: RECOLLECT_ORG_ID)")
    parser.add_argument("--thread", default=None, help="thread id to start or resume")
    parser.add_argument(
        "--no-worker",
        action="store_true",
        help="do not extract facts in a background thread (leave it to `recollect worker`)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Read a line, run a turn, print the reply, until EOF or /exit."""
    print(describe_model(), flush=True)
    ctx = Context(user_id=args.user, **({"org_id": args.org} if args.org else {}))
    thread = args.thread or f"{args.user}-{uuid.uuid4().hex[:8]}"
    scope = Scope.for_user(ctx.org_id, ctx.user_id)
    with open_persistence(scope=scope, worker=not args.no_worker) as persistence:
        claim_thread(persistence.pool, scope, thread)
        memory = configured_memory(persistence.pool)
        agent = make_graph(checkpointer=persistence.checkpointer, memory=memory)
        worker = Worker(
            persistence.worker_pool or persistence.pool,
            memory=memory,
            read_session=checkpoint_reader(persistence.checkpointer),
        )
        background = None if args.no_worker else start_background(worker)
        config = thread_config(thread)
        existing = agent.get_state(config).values.get("messages", [])
        print(f"thread: {thread} ({len(existing)} messages so far; /exit to leave)", flush=True)
        for line in _lines():
            if line in EXIT_WORDS:
                break
            if line == END_WORD:
                _end(None if args.no_worker else worker, memory, agent, ctx, thread)
                thread = f"{args.user}-{uuid.uuid4().hex[:8]}"
                claim_thread(persistence.pool, Scope.for_user(ctx.org_id, ctx.user_id), thread)
                config = thread_config(thread)
                print(f"thread: {thread} (new session)", flush=True)
                continue
            if line == "/history":
                for message in agent.get_state(config).values.get("messages", []):
                    print(f"  {message.type}: {message.text}", flush=True)
                continue
            result = agent.invoke(user_turn(line), config=config, context=ctx)
            print(f"assistant> {result['messages'][-1].text}", flush=True)
        if background is not None:
            thread_runner, stop = background
            stop.set()
            thread_runner.join()
            done = worker.drain(thread_id=thread, ignore_debounce=True)  # what the chat queued
            if done:
                print(f"memory: extracted facts from {len(done)} queued job(s)", flush=True)
        _end(None if args.no_worker else worker, memory, agent, ctx, thread)
    return 0


def _end(
    worker: Worker | None, memory: LongTermMemory, agent: Any, ctx: Context, thread: str
) -> None:
    """Extract what is still queued (unless that is left to `recollect worker`), then write
    the session's episode (once)."""
    if worker is not None:
        worker.drain(thread_id=thread, ignore_debounce=True)
    values = agent.get_state(thread_config(thread)).values
    messages, earlier = values.get("messages", []), (values.get("summary") or {}).get("text", "")
    scope = Scope.for_user(ctx.org_id, ctx.user_id)
    try:
        episode = end_session(memory, scope, thread, messages, earlier=earlier, model=ctx.model)
    except Exception as exc:  # the conversation is saved; the worker retries once it is idle
        print(
            f"memory: the session could not be summarised ({type(exc).__name__}: {exc}); "
            "the worker will retry once it has been idle",
            file=sys.stderr,
            flush=True,
        )
        return
    if episode is not None:
        print("memory: session summarised as an episode", flush=True)


def _lines() -> Any:
    while True:
        if sys.stdin.isatty():
            print("you> ", end="", flush=True)
        raw = sys.stdin.readline()
        if not raw:
            return
        line = raw.strip()
        if line:
            yield line
