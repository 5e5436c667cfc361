"""The background memory job: drain the extraction queue, exactly once per message.

For a claimed job the worker reads the thread's unextracted messages, asks the model for
facts (outside any transaction: it may take seconds), then in ONE tenant-scoped transaction
validates every candidate, hands the accepted ones to the `FactWriter`, files the rest for
review or as rejected, clears the messages' text and marks them extracted, and finishes the
job under its lease. A crash before the commit leaves nothing; after it, nothing is redone.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from psycopg import Connection
from psycopg_pool import ConnectionPool

from recollect.extraction import queue as jobs
from recollect.extraction.episodes import SessionReader, end_idle_sessions
from recollect.extraction.extractor import KnownFact, TranscriptLine, extract_facts
from recollect.extraction.fact_writer import EngineWriter, FactWriter
from recollect.extraction.failures import unfixable
from recollect.extraction.offline_extractor import offline_facts
from recollect.extraction.records import ExtractedFact
from recollect.extraction.validation import FactScreen, ValidationPolicy, Verdict
from recollect.gate.redaction import redact
from recollect.gate.screening import SPLIT_WINDOW
from recollect.gate.secrets import mask_secrets
from recollect.longterm.configured import configured_memory
from recollect.longterm.facts import LongTermMemory
from recollect.longterm.records import FactCategory, NewFact, RememberAction, RememberResult
from recollect.longterm.subjects import normalise_subject
from recollect.models.factory import OFFLINE_MODEL, chat_model, resolve_model_name
from recollect.store.scope import Scope
from recollect.store.tenancy import scoped
from recollect.trace.settings import clip, tracing_enabled
from recollect.trace.store import record_extraction

log = logging.getLogger(__name__)

SELECT_PENDING_MESSAGES = """
SELECT message_id, role, content FROM memory_job_messages
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND thread_id = %(thread_id)s
  AND extracted_at IS NULL AND NOT held
ORDER BY seq
LIMIT %(limit)s
"""

LOCK_MESSAGES = """
SELECT message_id FROM memory_job_messages
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND thread_id = %(thread_id)s
  AND message_id = ANY(%(ids)s) AND extracted_at IS NULL
FOR UPDATE
"""

MARK_EXTRACTED = """
UPDATE memory_job_messages SET extracted_at = now(), content = NULL, schedule = NULL
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND thread_id = %(thread_id)s
  AND message_id = ANY(%(ids)s)
"""

KNOWN_KEYS = """
SELECT dedup_key FROM fact_candidates
WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND status IN ('stored', 'review')
"""

RECENT_FACTS = """
SELECT text FROM (
    SELECT text, id FROM fact_candidates
    WHERE org_id = %(org_id)s AND user_id = %(user_id)s AND status IN ('stored', 'review')
    ORDER BY id DESC LIMIT %(limit)s
) latest ORDER BY id
"""
"""The user's latest kept facts, oldest first: a new fact may finish an instruction they began."""

INSERT_CANDIDATE = """
INSERT INTO fact_candidates (org_id, user_id, session_id, thread_id, job_id, text, category,
    subject, confidence, source_message_ids, status, reasons, dedup_key, fact_id, decided_at)
VALUES (%(org_id)s, %(user_id)s, %(session_id)s, %(thread_id)s, %(job_id)s, %(text)s,
    %(category)s, %(subject)s, %(confidence)s, %(sources)s, %(status)s, %(reasons)s,
    %(key)s, %(fact_id)s, CASE WHEN %(status)s = 'review' THEN NULL ELSE now() END)
"""

MAX_MESSAGES_PER_JOB = 200
MAX_RELATED_QUERY_CHARS = 2000
"""The user's words that pick the known facts an extraction call sees (recall's query)."""
PRUNE_EVERY_S = 3600.0
SWEEP_EVERY_S = 30.0


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw else default


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


@dataclass(frozen=True)
class WorkerSettings:
    """Retry, lease and polling behaviour; `from_env` reads `RECOLLECT_WORKER_*`."""

    max_attempts: int = 5
    backoff_s: float = 2.0
    """First retry delay; doubles per attempt, capped at `max_backoff_s`."""
    max_backoff_s: float = 300.0
    lease_s: float = 120.0
    """A claim older than this without finishing is considered dead and is taken again."""
    poll_s: float = 1.0
    timeout_s: float = 60.0
    """Per extraction call."""
    retention_days: float = 7.0
    """Finished jobs older than this are deleted by `serve` (hourly); dead ones are kept."""
    session_idle_s: float = 1800.0
    """A session idle this long is ended and summarised as an episode (0: never)."""
    episode_model: str = ""
    """The model that writes episode summaries ("" : the configured chat model)."""

    @classmethod
    def from_env(cls) -> WorkerSettings:
        return cls(
            max_attempts=_env_int("RECOLLECT_WORKER_MAX_ATTEMPTS", 5),
            backoff_s=_env_float("RECOLLECT_WORKER_BACKOFF_S", 2.0),
            max_backoff_s=_env_float("RECOLLECT_WORKER_MAX_BACKOFF_S", 300.0),
            lease_s=_env_float("RECOLLECT_WORKER_LEASE_S", 120.0),
            poll_s=_env_float("RECOLLECT_WORKER_POLL_S", 1.0),
            timeout_s=_env_float("RECOLLECT_EXTRACTION_TIMEOUT_S", 60.0),
            retention_days=_env_float("RECOLLECT_WORKER_RETENTION_DAYS", 7.0),
            session_idle_s=_env_float("RECOLLECT_SESSION_IDLE_S", 1800.0),
            episode_model=os.environ.get("RECOLLECT_EPISODE_MODEL", ""),
        )

    def backoff(self, attempts: int) -> float:
        return float(min(self.max_backoff_s, self.backoff_s * 2 ** max(0, attempts - 1)))


class LeaseLostError(RuntimeError):
    """Another worker took the job over; this one's work is rolled back."""


@dataclass(frozen=True)
class Outcome:
    """What one job did, for logs, the CLI and tests."""

    job_id: int
    status: str
    stored: int = 0
    review: int = 0
    rejected: int = 0
    error: str | None = None
    parked: bool = False
    """Dead-lettered at once: retrying cannot help until the configuration changes."""


@dataclass
class Worker:
    """Claims and runs jobs; safe to run many at once, in threads or processes."""

    pool: ConnectionPool[Any]
    writer: FactWriter | None = None
    """None: `EngineWriter(memory)`, the long-term engine's write path."""
    settings: WorkerSettings = field(default_factory=WorkerSettings.from_env)
    policy: ValidationPolicy = field(default_factory=ValidationPolicy.from_env)
    memory: LongTermMemory | None = None
    """The engine facts and episodes go to (None: `configured_memory(pool)`, with the
    configured embedder, so extracted facts are found by dense recall too)."""
    read_session: SessionReader | None = None
    """A thread's messages and summary (`checkpoint_reader`); enables the inactivity sweep."""
    models: frozenset[str] | None = None
    """Run only jobs queued for these models (or the default, ""); None: every job. A job for
    another model stays pending for a worker that has it."""

    def __post_init__(self) -> None:
        if self.memory is None:
            self.memory = configured_memory(self.pool)
        if self.writer is None:
            self.writer = EngineWriter(self.memory)

    def end_idle_sessions(self) -> list[str]:
        """Write the episode of every session idle past `settings.session_idle_s`."""
        if self.read_session is None or self.settings.session_idle_s <= 0:
            return []
        assert self.memory is not None
        return end_idle_sessions(
            self.memory,
            self.read_session,
            idle_s=self.settings.session_idle_s,
            model=self.settings.episode_model,
            listing=self.pool,
        )

    def run_once(
        self,
        *,
        thread_id: str | None = None,
        ignore_debounce: bool = False,
        scope: Scope | None = None,
    ) -> Outcome | None:
        """Claim one due job and run it; None when the queue has nothing due. With a scope,
        only that scope's jobs are claimed (what a request-serving process may do)."""
        with self.pool.connection() as conn:
            job = jobs.claim(
                conn,
                lease_s=self.settings.lease_s,
                thread_id=thread_id,
                ignore_debounce=ignore_debounce,
                scope=scope,
                models=None if self.models is None else sorted(self.models),
            )
        if job is None:
            return None
        return self.run(job)

    def drain(
        self,
        *,
        thread_id: str | None = None,
        ignore_debounce: bool = False,
        scope: Scope | None = None,
    ) -> list[Outcome]:
        """Run jobs until none is due."""
        outcomes = []
        while (
            outcome := self.run_once(
                thread_id=thread_id, ignore_debounce=ignore_debounce, scope=scope
            )
        ) is not None:
            outcomes.append(outcome)
        return outcomes

    def run(self, job: jobs.Job) -> Outcome:
        """Extract and store, or record the failure for a retry or the dead-letter state."""
        if job.attempts > self.settings.max_attempts:
            return self._failed(job, "lease expired on the last allowed attempt (worker died?)")
        try:
            return self._extract_and_store(job)
        except Exception as exc:  # every failure is recorded on the job
            hint = unfixable(exc, resolve_model_name(job.model))
            if hint is not None:  # the same next time: parked until the configuration changes
                return self._failed(job, hint, park=True)
            return self._failed(job, f"{type(exc).__name__}: {exc}")

    def _extract_and_store(self, job: jobs.Job) -> Outcome:
        params = {**_scope_params(job), "limit": MAX_MESSAGES_PER_JOB}
        scope = _scope_params(job)
        with scoped(self.pool, job.scope) as conn:
            rows = conn.execute(SELECT_PENDING_MESSAGES, params).fetchall()
            known = {r["dedup_key"] for r in conn.execute(KNOWN_KEYS, scope)}
            recent = [
                r["text"] for r in conn.execute(RECENT_FACTS, {**scope, "limit": SPLIT_WINDOW})
            ]
        lines = [TranscriptLine(r["message_id"], r["role"], r["content"] or "") for r in rows]
        facts: list[ExtractedFact] = []
        if lines and resolve_model_name(job.model) == OFFLINE_MODEL:
            facts = offline_facts(lines)
        elif lines:
            categories = [c.value for c in self.policy.categories]
            model = chat_model(job.model)
            facts = extract_facts(
                model,
                lines,
                categories,
                timeout_s=self.settings.timeout_s,
                known=self._known(job, lines),
            )
        # Screening is the job's CPU work: done before the transaction, so no row stays locked
        # while it runs (a turn's checkpoint writes the same thread's queue rows).
        screen = FactScreen(self.policy, set(known), recent)
        judged = screen.check_batch([(fact.text, fact.category) for fact in facts])
        with scoped(self.pool, job.scope) as conn:
            outcome = self._store(
                conn, job, facts, judged, known, [line.message_id for line in lines]
            )
            if not jobs.finish(conn, job, outcome.stored + outcome.review):
                raise LeaseLostError(f"job {job.id}: lease lost before commit; rolled back")
        if outcome.stored and self.memory is not None:
            self.memory.persist_encodings(job.scope)  # after the commit, off its lock
        log.info(
            "memory job %s: %s stored, %s review, %s rejected",
            job.id,
            outcome.stored,
            outcome.review,
            outcome.rejected,
        )
        return outcome

    def _known(self, job: jobs.Job, lines: list[TranscriptLine]) -> list[KnownFact]:
        """What the user's memory already holds on what was said, by similarity and subject."""
        assert self.memory is not None
        said = " ".join(line.content for line in lines if line.role == "user")
        try:
            stored = self.memory.related(job.scope, said[:MAX_RELATED_QUERY_CHARS])
        except Exception as exc:  # without context the write path's own rule still decides
            log.warning("memory job %s: known facts unavailable (%s)", job.id, exc)
            return []
        return [KnownFact(f.id, f.category.value, f.subject, f.text) for f in stored]

    def _store(
        self,
        conn: Connection[Any],
        job: jobs.Job,
        facts: list[ExtractedFact],
        judged: list[Verdict],
        known: set[str],
        ids: list[str],
    ) -> Outcome:
        """Store what screening accepted; `known` is the dedup keys it was screened against,
        so a fact another job stored since is a duplicate here too."""
        scope = _scope_params(job)
        locked = {r["message_id"] for r in conn.execute(LOCK_MESSAGES, {**scope, "ids": ids})}
        if locked != set(ids):
            raise LeaseLostError(f"job {job.id}: messages were extracted by another worker")
        since = {r["dedup_key"] for r in conn.execute(KNOWN_KEYS, scope)} - known
        counts = {"stored": 0, "review": 0, "rejected": 0}
        verdicts: list[dict[str, Any]] = []
        for fact, verdict in zip(facts, judged, strict=True):
            status = "rejected"
            fact_id: str | None = None
            if verdict.accepted and verdict.key in since:
                verdict = replace(
                    verdict,
                    accepted=False,
                    reasons=(*verdict.reasons, "duplicate: already remembered"),
                )
            if verdict.accepted and fact.action == "none":
                verdict = replace(verdict, reasons=(*verdict.reasons, "already known"))
            elif verdict.accepted and fact.confidence >= job.min_confidence:
                status = "stored"
                assert self.writer is not None
                fact_id = self.writer.remember(
                    conn, job.scope, _new_fact(fact, verdict.text), vector=verdict.embedding
                )
            elif verdict.accepted:
                status = "review"
            counts[status] += 1
            reasons = list(verdict.reasons)
            if status == "review":
                reasons.append(f"low confidence: {fact.confidence:.2f} < {job.min_confidence:.2f}")
            verdicts.append(self._verdict(fact, verdict.text, status, fact_id, reasons))
            conn.execute(
                INSERT_CANDIDATE,
                {
                    **scope,
                    "job_id": job.id,
                    "text": mask_secrets(verdict.text),
                    "category": fact.category,
                    "subject": _subject(fact.subject),
                    "confidence": fact.confidence,
                    "sources": fact.source_message_ids,
                    "status": status,
                    "reasons": [_masked_reason(reason) for reason in reasons],
                    "key": verdict.key,
                    "fact_id": fact_id,
                },
            )
        conn.execute(MARK_EXTRACTED, {**scope, "ids": ids})
        if tracing_enabled():
            trace = {"job_id": job.id, "model": job.model, "messages": ids, "facts": verdicts}
            record_extraction(conn, job.scope, job.thread_id, trace)
        return Outcome(job.id, "done", counts["stored"], counts["review"], counts["rejected"])

    def _verdict(
        self,
        fact: ExtractedFact,
        text: str,
        status: str,
        fact_id: str | None,
        reasons: list[str],
    ) -> dict[str, Any]:
        """One candidate fact's fate as a trace shows it: stored, merged into a known fact,
        superseding others (which), sent to review, or rejected (why)."""
        verdict = "stored" if status == "stored" else status
        replaced: list[str] = []
        last = getattr(self.writer, "last", None) if status == "stored" else None
        if isinstance(last, RememberResult):
            replaced = list(last.replaced)
            if last.action is RememberAction.REINFORCED:
                verdict = "merged"
            elif replaced:
                verdict = "superseded"
        return {
            "text": clip(text),
            "category": fact.category,
            "confidence": fact.confidence,
            "sources": list(fact.source_message_ids),
            "verdict": verdict,
            "fact_id": fact_id,
            "superseded": replaced,
            "reasons": reasons,
        }

    def _failed(self, job: jobs.Job, error: str, *, park: bool = False) -> Outcome:
        """Schedule a retry (or dead-letter the job after its last attempt); `park` dead-letters
        it at once, for failures no retry can fix."""
        # Errors may quote the model's output, and so what the user said.
        message = redact(mask_secrets(error)[:2000]).text
        with self.pool.connection() as conn:
            status = jobs.fail(
                conn,
                job,
                message,
                max_attempts=0 if park else self.settings.max_attempts,
                backoff_s=self.settings.backoff(job.attempts),
            )
        if park:
            log.warning("memory job %s parked: %s", job.id, message)
        else:
            log.warning(
                "memory job %s attempt %s failed (%s): %s", job.id, job.attempts, status, message
            )
        return Outcome(job.id, status or "lost", error=message, parked=park and status == "dead")

    def prune(self) -> int:
        """Delete finished jobs past their retention; returns how many."""
        with self.pool.connection() as conn:
            return jobs.prune_finished(conn, self.settings.retention_days)

    def serve(
        self, stop: threading.Event, on_outcome: Callable[[Outcome], None] | None = None
    ) -> None:
        """Poll until `stop` is set; errors reaching the database are logged and retried."""
        next_prune = 0.0
        next_sweep = 0.0
        while not stop.is_set():
            started = time.monotonic()
            try:
                if started >= next_prune:
                    self.prune()
                    next_prune = time.monotonic() + PRUNE_EVERY_S
                if started >= next_sweep:
                    next_sweep = time.monotonic() + min(SWEEP_EVERY_S, self.settings.session_idle_s)
                    self.end_idle_sessions()
                outcome = self.run_once()
            except Exception:
                log.exception("memory worker: cannot claim a job; retrying")
                outcome = None
            if outcome is None:
                stop.wait(self.settings.poll_s)
                continue
            if on_outcome is not None:
                on_outcome(outcome)


def start_background(
    worker: Worker, on_outcome: Callable[[Outcome], None] | None = None
) -> tuple[threading.Thread, threading.Event]:
    """Run `worker.serve` in a daemon thread; set the event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=worker.serve, args=(stop, on_outcome), name="memory-worker", daemon=True
    )
    thread.start()
    return thread, stop


def _scope_params(job: jobs.Job) -> dict[str, Any]:
    return {
        "org_id": job.scope.org_id,
        "user_id": job.scope.user_id,
        "thread_id": job.thread_id,
        "session_id": job.scope.session_id,
    }


def _subject(raw: str | None) -> str | None:
    """The subject key, from the model's wording with its secrets masked (normalising first
    would hide a key from the screen: `sk-proj-…` becomes `sk_proj_…`)."""
    return normalise_subject(None if raw is None else mask_secrets(raw))


def _masked_reason(reason: str) -> str:
    """A reason with what it quotes masked; its label stays ("secret: aws_access_key" is
    itself a `key: value` line to the screen)."""
    label, colon, quoted = reason.partition(": ")
    return f"{label}{colon}{mask_secrets(quoted)}" if colon else mask_secrets(reason)


def _new_fact(fact: ExtractedFact, text: str) -> NewFact:
    return NewFact(
        text=text,
        category=FactCategory(fact.category),
        subject=_subject(fact.subject),
        confidence=fact.confidence,
        source_ids=tuple(fact.source_message_ids),
        replaces=(fact.updates,) if fact.action == "update" and fact.updates else (),
    )


def wait_for(predicate: Callable[[], bool], timeout_s: float, poll_s: float = 0.05) -> bool:
    """Poll until `predicate` holds or time runs out (for the CLI, demo and tests)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll_s)
    return predicate()
