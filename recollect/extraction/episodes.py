"""Episodes: when a session ends, one summary of it (topic, findings, outcome, pending items,
date) is stored with an embedding and recalled like a fact ("what did we find about RAG?").

A session ends once: `end_session` marks the thread ended and writes the episode in one
transaction, so an explicit end, the chat's exit and the worker's inactivity sweep racing each
other still leave one episode. The summary comes from the model's structured output (offline:
a deterministic digest of the transcript) and is redacted before it is embedded or stored.
Secrets never reach it: the transcript the model reads is masked (`mask_secrets`), and so is
the summary it returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langgraph.checkpoint.base import BaseCheckpointSaver
from psycopg_pool import ConnectionPool
from pydantic import ValidationError

from recollect.extraction.extractor import TranscriptLine
from recollect.extraction.records import EpisodeSummary
from recollect.extraction.validation import ValidationPolicy
from recollect.gate.redaction import redact
from recollect.gate.screening import screen
from recollect.gate.secrets import mask_secrets
from recollect.longterm.facts import LongTermMemory, aware
from recollect.longterm.records import NewEpisode
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name
from recollect.store.acting import acting_as
from recollect.store.errors import RecollectError
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from recollect.store.threads import CLAIM_THREAD

EPISODE_TOOL = EpisodeSummary.__name__
MAX_TRANSCRIPT_CHARS = 24_000
EPISODE_PROMPT = """Summarise the conversation below as an episode the assistant can recall \
in a later, separate session: its topic (a short noun phrase), the findings or decisions \
(short statements), the outcome, and what was left pending. Leave out small talk, secrets and \
exact personal identifiers. Use the user's own terms so a later question finds it."""

MARK_ENDED = """
UPDATE threads SET ended_at = now()
WHERE thread_id = %(thread_id)s AND org_id = %(org_id)s AND user_id = %(user_id)s
  AND ended_at IS NULL
"""

IDLE_THREADS = "SELECT * FROM recollect_idle_threads(%(idle_s)s, %(limit)s)"
"""Threads whose last turn (queued for extraction) is older than the timeout, and whose
extraction is finished: the queue is the one cross-tenant record of activity, read through a
definer function because `memory_jobs` is under row-level security."""

THREAD_ENDED = """
SELECT ended_at FROM threads
WHERE thread_id = %(thread_id)s AND org_id = %(org_id)s AND user_id = %(user_id)s
"""

MARK_JOBS_SUMMARISED = """
UPDATE memory_jobs SET episode_at = now()
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND thread_id = %(thread_id)s
  AND episode_at IS NULL
"""

_PENDING = re.compile(r"\b(?:todo|to do|next|later|follow[- ]up|pending|still need)\b", re.I)


@dataclass(frozen=True)
class WrittenEpisode:
    """The episode a session left: its id and the (redacted) text that was stored."""

    id: str
    summary: str


class EpisodeError(RecollectError):
    """The model's summary could not be used; the session is not marked ended."""


def transcript(messages: Sequence[BaseMessage], earlier: str = "") -> list[TranscriptLine]:
    """The user's and the assistant's words from a graph's messages (tool traffic left out),
    after the lines of `earlier` (the running summary of what was trimmed away), secrets
    masked."""
    lines: list[TranscriptLine] = []
    for raw in mask_secrets(earlier).splitlines():
        role, sep, said = raw.strip().removeprefix("- ").partition(": ")
        if sep and role in ("user", "assistant") and said.strip():
            lines.append(TranscriptLine(f"summary-{len(lines)}", role, said.strip()))
        elif raw.strip():
            lines.append(TranscriptLine(f"summary-{len(lines)}", "summary", raw.strip()))
    for message in messages:
        if isinstance(message, HumanMessage):
            role = "user"
        elif isinstance(message, AIMessage) and not message.tool_calls:
            role = "assistant"
        else:
            continue
        if message.text.strip():
            said = mask_secrets(message.text.strip())
            lines.append(TranscriptLine(str(message.id or len(lines)), role, said))
    return lines


def offline_summary(lines: Sequence[TranscriptLine]) -> EpisodeSummary:
    """A deterministic digest: the first user line is the topic, the user's statements are the
    findings, the last reply is the outcome, and lines that say "next"/"todo" are pending."""
    said = [line.content for line in lines if line.role == "user"]
    replies = [line.content for line in lines if line.role == "assistant"]
    if not said:
        raise EpisodeError("a session without user messages has nothing to summarise")
    pending = [s for s in said if _PENDING.search(s)]
    findings = [s for s in said[1:] if s not in pending] or said[:1]
    return EpisodeSummary(
        topic=_short(said[0], 300),
        findings=[_short(s, 160) for s in findings[-10:]],
        outcome=_short(replies[-1], 160) if replies else "",
        pending=[_short(s, 160) for s in pending[-10:]],
    )


def screened(summary: EpisodeSummary) -> EpisodeSummary:
    """Drop findings and pending items that are instructions to the assistant: an episode is
    recalled into future prompts, so it must not carry an injection there."""
    return summary.model_copy(
        update={
            "topic": summary.topic if not screen(summary.topic) else "a conversation",
            "findings": [f for f in summary.findings if not screen(f)],
            "outcome": summary.outcome if not screen(summary.outcome) else "",
            "pending": [p for p in summary.pending if not screen(p)],
        }
    )


def summarize(
    lines: Sequence[TranscriptLine], *, model: str = "", timeout_s: float = 60.0
) -> EpisodeSummary:
    """The episode summary through the model's structured output (offline: `offline_summary`)."""
    if resolve_model_name(model) == OFFLINE_MODEL:
        return offline_summary(lines)
    excerpt = "\n".join(f"{line.role}: {line.content}" for line in lines)[-MAX_TRANSCRIPT_CHARS:]
    bound = chat_model(model).bind_tools(
        [EpisodeSummary], tool_choice=EPISODE_TOOL, timeout=timeout_s
    )
    reply = bound.invoke(
        [SystemMessage(content=EPISODE_PROMPT), HumanMessage(content=f"Conversation:\n{excerpt}")]
    )
    calls = [c for c in getattr(reply, "tool_calls", []) if c["name"] == EPISODE_TOOL]
    if not calls:
        raise EpisodeError("the model returned no structured episode summary")
    try:
        return EpisodeSummary.model_validate(calls[0]["args"])
    except ValidationError as exc:
        raise EpisodeError(
            f"episode summary violates the schema: {exc.errors()[0]['msg']}"
        ) from exc


def end_session(
    memory: LongTermMemory,
    scope: Scope,
    thread_id: str,
    messages: Sequence[BaseMessage],
    *,
    earlier: str = "",
    model: str = "",
    timeout_s: float = 60.0,
    now: datetime | None = None,
    policy: ValidationPolicy | None = None,
) -> WrittenEpisode | None:
    """End a session and store its episode; returns it, or None when the session had already
    ended or nobody said anything. `earlier`: the running summary of trimmed messages. The
    episode belongs to the user (org, user), whatever session `scope` names."""
    user = Scope.for_user(scope.org_id, scope.user_id)
    policy = policy or ValidationPolicy.from_env()
    params = {"thread_id": thread_id, "org_id": user.org_id, "user_id": user.user_id}
    with scoped(memory.pool, user) as conn:
        row = conn.execute(THREAD_ENDED, params).fetchone()
    if row is not None and row["ended_at"] is not None:
        return None  # ended before: no model call (a racing end is caught below)
    lines = transcript(messages, earlier)
    summary = (
        summarize(lines, model=model, timeout_s=timeout_s)
        if any(line.role == "user" for line in lines)
        else None
    )
    when = aware(now, "now")
    text = ""
    vector: list[float] | None = None
    if summary is not None:
        summary = screened(summary)
        text = redact(mask_secrets(summary.as_text(when.date().isoformat())), policy.extra_patterns,
                      policy.allow_pii).text[:8000]  # fmt: skip
        vector = memory.embed_one(text)
    with scoped(memory.pool, user) as conn:
        conn.execute(CLAIM_THREAD, {**params, "kind": "agent"})
        conn.execute(MARK_JOBS_SUMMARISED, params)
        if conn.execute(MARK_ENDED, params).rowcount != 1 or summary is None:
            return None
        episode = NewEpisode(
            summary=text,
            occurred_at=when,
            source_ids=(thread_id,),
            metadata={"thread_id": thread_id, "kind": "session"},
        )
        return WrittenEpisode(memory.record_episode_in(conn, user, episode, vector=vector), text)


def end_idle_sessions(
    memory: LongTermMemory,
    read_session: SessionReader,
    *,
    idle_s: float,
    model: str = "",
    limit: int = 50,
    listing: ConnectionPool[Any] | None = None,
) -> list[str]:
    """End every session idle for `idle_s` seconds; `read_session(thread_id)` returns a
    thread's messages and summary. Returns the ids of the episodes written. Finding the idle
    threads crosses tenants, so `listing` is the worker role's pool when the memory's own
    pool is the app role's (a chat's in-process worker)."""
    pool: ConnectionPool[Any] = listing or memory.pool
    with pool.connection() as conn:
        idle = conn.execute(IDLE_THREADS, {"idle_s": idle_s, "limit": limit}).fetchall()
    written = []
    for row in idle:
        scope = Scope.for_user(row["org_id"], row["user_id"])
        with acting_as(scope):
            messages, earlier = read_session(row["thread_id"])
        episode = end_session(memory, scope, row["thread_id"], messages, earlier=earlier,
                              model=model)  # fmt: skip
        if episode is not None:
            written.append(episode.id)
    return written


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


SessionReader = Callable[[str], tuple[list[BaseMessage], str]]
"""A thread's messages and running summary, by thread id."""


def checkpoint_reader(saver: BaseCheckpointSaver[Any]) -> SessionReader:
    """`read_session` for the inactivity sweep: a thread's last checkpoint."""

    def read(thread_id: str) -> tuple[list[BaseMessage], str]:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        if found is None:
            return [], ""
        values = found.checkpoint["channel_values"]
        return list(values.get("messages", [])), str((values.get("summary") or {}).get("text", ""))

    return read
