"""`recollect chat`: a REPL over stdin; every turn is checkpointed before the reply prints."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage
from psycopg_pool import PoolTimeout

from recollect import thread_config
from recollect.cli.chat_retry import gave_up_message, retry_notice
from recollect.cli.chat_status import StatusBoard, log_file, log_to_file, summary_line
from recollect.cli.graph_target import DEFAULT_GRAPH, load_agent
from recollect.cli.org import add_org_argument, org_of
from recollect.extraction import queue as jobs
from recollect.extraction.episodes import checkpoint_reader, end_session
from recollect.extraction.worker import Worker, start_background
from recollect.history.limits import MessageRefusedError, check_message
from recollect.history.persistence import open_persistence
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.models.factory import describe_model, resolve_model_name
from recollect.state.context import Context
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from recollect.store.threads import claim_thread
from recollect.trace.writer import WRITER

EXIT_WORDS = {"/exit", "/quit"}
END_WORD = "/end"
"""Ends the session: its episode is written now, and the chat starts a fresh thread."""
JOBS_WORD = "/jobs"
JOBS_SHOWN = 20
TURN_ATTEMPTS = 6
"""A turn that loses its database connection is retried (fresh connections) this often."""
RETRY_DELAY_S = 1.0
"""First wait before a retry; it doubles each time (about 30 s in all), time for a restart."""


def register(commands: Any) -> None:
    """Add the `chat` sub-command."""
    parser = commands.add_parser("chat", help="talk to the agent; the thread survives restarts")
    parser.add_argument("--user", required=True, help="user id (memory is per user)")
    add_org_argument(parser)
    parser.add_argument("--thread", default=None, help="thread id to start or resume")
    parser.add_argument(
        "--graph",
        default=None,
        help="the agent to talk to: module:attribute or file.py:attribute, a factory taking "
        f"checkpointer= and memory= or a StateGraph builder (default {DEFAULT_GRAPH})",
    )
    parser.add_argument(
        "--no-worker",
        action="store_true",
        help="do not extract facts in a background thread (leave it to `recollect worker`)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Read a line, run a turn, print the reply, until EOF or /exit."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")  # a reply never ends the chat on printing
    print(describe_model(), flush=True)
    ctx = Context(user_id=args.user, org_id=org_of(args))
    thread = args.thread or f"{args.user}-{uuid.uuid4().hex[:8]}"
    details = log_file()
    log_to_file(details)
    board = StatusBoard()
    scope = Scope.for_user(ctx.org_id, ctx.user_id)
    with open_persistence(scope=scope, worker=not args.no_worker) as persistence:
        claim_thread(persistence.pool, scope, thread)
        memory = configured_memory(persistence.pool)
        agent = load_agent(args.graph, checkpointer=persistence.checkpointer, memory=memory)
        worker = Worker(
            persistence.worker_pool or persistence.pool,
            memory=memory,
            read_session=checkpoint_reader(persistence.checkpointer),
            models=frozenset({resolve_model_name(ctx.model)}),  # others wait for their worker
        )
        background = None if args.no_worker else start_background(worker, board.record)
        config = thread_config(thread)
        existing = agent.get_state(config).values.get("messages", [])
        print(
            f"thread: {thread} ({len(existing)} messages so far; /jobs for memory jobs, "
            f"/exit to leave; background details in {details})",
            flush=True,
        )
        for line in _lines(board):
            if line in EXIT_WORDS:
                break
            if line == JOBS_WORD:
                _show_jobs(persistence.pool, scope, details)
                continue
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
            try:
                check_message(line)  # before any work: nothing is embedded, sent or saved
                reply = _turn(agent, HumanMessage(content=line, id=str(uuid.uuid4())), config, ctx)
            except MessageRefusedError as exc:
                print(f"recollect: {exc}", file=sys.stderr, flush=True)
                continue
            print(f"assistant> {reply}", flush=True)
        WRITER.flush()  # the turns' traces land before the exit's extraction rows number after them
        if background is not None:
            thread_runner, stop = background
            stop.set()
            thread_runner.join()
            done = worker.drain(thread_id=thread, ignore_debounce=True)  # what the chat queued
            for status in (board.take_line(), summary_line(done)):
                if status:
                    print(status, flush=True)
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


def _show_jobs(pool: Any, scope: Scope, details: Any) -> None:
    """This user's memory jobs, newest last, with the error that stopped any of them."""
    with scoped(pool, scope) as conn:
        rows = jobs.jobs_for_user(conn, scope)
    if not rows:
        print(f"memory jobs: none for {scope.user_id} in org {scope.org_id!r}", flush=True)
    for row in rows[-JOBS_SHOWN:]:
        error = f" — {row['last_error']}" if row["last_error"] else ""
        print(
            f"  job {row['id']} thread {row['thread_id']} model {row['model'] or 'default'}: "
            f"{row['status']} after {row['attempts']} attempt(s){error}",
            flush=True,
        )
    print(f"  (details in {details}; `recollect memory jobs --retry` requeues parked jobs)")


def _turn(agent: Any, message: HumanMessage, config: Any, ctx: Context) -> str:
    """Run one turn; when the database goes away mid-turn (a restart, a failover), wait and
    carry on from the last checkpoint, so no turn is lost or answered twice.

    The message has a fixed id, so sending it again replaces it instead of adding a copy; a
    run that got as far as a checkpoint resumes from there.
    """
    delay = RETRY_DELAY_S
    for attempt in range(TURN_ATTEMPTS):
        try:
            if attempt == 0:
                result = agent.invoke({"messages": [message]}, config=config, context=ctx)
                return str(result["messages"][-1].text)
            state = agent.get_state(config)
            ids = [m.id for m in state.values.get("messages", [])]
            if message.id in ids and state.next:
                result = agent.invoke(None, config=config, context=ctx)
            elif message.id in ids and ids[-1] != message.id:
                result = state.values  # the turn had finished; only the reply was lost
            else:
                result = agent.invoke({"messages": [message]}, config=config, context=ctx)
            return str(result["messages"][-1].text)
        except (psycopg.OperationalError, PoolTimeout) as exc:
            if attempt == TURN_ATTEMPTS - 1:
                raise RecollectError(gave_up_message(exc)) from exc
            print(retry_notice(exc, delay), file=sys.stderr, flush=True)
            time.sleep(delay)
            delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover


def _lines(board: StatusBoard) -> Iterator[str]:
    """Lines from stdin, read as bytes: invalid UTF-8 is replaced (and said so), never fatal;
    the background's one status line is printed between turns, never over the prompt."""
    number = 0
    while True:
        status = board.take_line()
        if status:
            print(status, flush=True)
        if sys.stdin.isatty():
            print("you> ", end="", flush=True)
        raw = sys.stdin.buffer.readline()
        if not raw:
            return
        number += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            print(
                f"recollect: input line {number} is not valid UTF-8; "
                "the undecodable bytes were replaced with \ufffd",
                file=sys.stderr,
                flush=True,
            )
        line = text.strip()
        if line:
            yield line
