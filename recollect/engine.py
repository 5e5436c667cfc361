"""The engine's parts a template builds graphs of its own kind from (the refund workflow, the
orchestrator, the served API's edge): pools and tenant scopes, the clock, models, token counts,
the extraction queue. The memory itself is `recollect`'s; this module names the rest of what
the template's own graphs may use, so nothing else of the engine is theirs to import."""

from __future__ import annotations

from recollect.basestore.search_shape import StoreSearchShape
from recollect.extraction.direct import forget_now, remember_now
from recollect.extraction.queue import BufferedMessage, QueueUnavailableError
from recollect.extraction.records import WORKER_ROLE
from recollect.extraction.worker import Worker
from recollect.history.limits import MessageRefusedError, MessageTooLargeError, check_message
from recollect.history.owned_checkpoints import ScopedPostgresSaver
from recollect.history.truncation import truncate_text
from recollect.history.window import message_tokens
from recollect.longterm.records import Recollection
from recollect.models.factory import OFFLINE_MODEL, resolve_model_name
from recollect.prebuilt.extract import Queued
from recollect.prebuilt.queue_for_extraction import (
    aqueue_for_extraction,
    queue_for_extraction,
    run_thread_id,
)
from recollect.prebuilt.served_worker import server_worker
from recollect.store import clock
from recollect.store.acting import acting_as
from recollect.store.identity import InvalidIdError, normalise_id
from recollect.store.pool import shared_pool, use_pool
from recollect.store.scope import REVIEWER, Scope

__all__ = [
    "OFFLINE_MODEL",
    "REVIEWER",
    "WORKER_ROLE",
    "BufferedMessage",
    "InvalidIdError",
    "MessageRefusedError",
    "MessageTooLargeError",
    "QueueUnavailableError",
    "Queued",
    "Recollection",
    "Scope",
    "ScopedPostgresSaver",
    "StoreSearchShape",
    "Worker",
    "acting_as",
    "aqueue_for_extraction",
    "check_message",
    "clock",
    "forget_now",
    "message_tokens",
    "normalise_id",
    "queue_for_extraction",
    "remember_now",
    "resolve_model_name",
    "run_thread_id",
    "server_worker",
    "shared_pool",
    "truncate_text",
    "use_pool",
]
