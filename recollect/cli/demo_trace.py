"""The demo's "why did the model know that?" section: one planted value's story from the
memory trace, as `recollect trace --thread T --find TEXT` tells it."""

from __future__ import annotations

from recollect.cli.trace import story_text
from recollect.history.persistence import open_persistence
from recollect.store.scope import Scope
from recollect.trace.find import story
from recollect.trace.settings import tracing_enabled
from recollect.trace.store import matching_facts, thread_traces
from recollect.trace.writer import WRITER


def show_trace(scope: Scope, thread: str, planted: str) -> None:
    """Where `planted` went turn by turn: said, pinned, trimmed, folded, stored, recalled."""
    if not tracing_enabled():
        print("(RECOLLECT_TRACE is off: no traces were written)")
        return
    WRITER.flush()  # the turns' traces are written off the request path
    with open_persistence(announce=False, scope=scope) as persistence:
        rows = thread_traces(persistence.pool, scope, thread)
        facts = matching_facts(persistence.pool, scope, planted)
    print(story_text({"thread": thread, **story(rows, facts, planted)}))
    print(f"\n(the same as: recollect trace --user {scope.user_id} --thread {thread} "
          f'--find "{planted}" [--json]; recollect stats for the metrics)')  # fmt: skip
