"""The demo's delegation section: one task split across workers, each in its own context.

It runs the orchestrator graph over the demo user's long-term memory and prints, for every
context the task used, how many tokens it held: each worker's brief (its blackboard keys, its
own recall with its subtask as the query, within `per_worker_tokens`) and the orchestrator's
own prompt, which sees only the distilled results.
"""

from __future__ import annotations

from recollect import thread_config
from recollect.cli.graph_target import template_attribute
from recollect.history.persistence import open_persistence
from recollect.longterm.configured import configured_memory
from recollect.state.context import Context
from recollect.store.scope import Scope
from recollect.store.threads import claim_thread

TASK = (
    "Which frontend framework does the team use now?\n"
    "Where does the team deploy?\n"
    "How does Dana like answers written?"
)
BLACKBOARD = {"deadline": "the migration ships on 30 June"}


def show_orchestration(ctx: Context, thread: str) -> None:
    """Run `TASK` through the orchestrator and print each context's token count."""
    run_ctx = Context(**{**ctx.__dict__, "extraction": False})
    with open_persistence(announce=False) as persistence:
        claim_thread(persistence.pool, Scope.for_user(ctx.org_id, ctx.user_id), thread)
        memory = configured_memory(persistence.pool)
        make_graph = template_attribute("graphs.orchestrator:make_graph")
        graph = make_graph(checkpointer=persistence.checkpointer, memory=memory)
        out = graph.invoke(
            {"task": TASK, "blackboard": BLACKBOARD}, thread_config(thread), context=run_ctx
        )
    print(f"task split into {len(out['results'])} workers; budget per worker: "
          f"{run_ctx.per_worker_tokens} tokens, per handoff: {run_ctx.handoff_tokens}")  # fmt: skip
    for result in out["results"]:
        print(f"\n  worker {result['worker_id']}: {result['task']}")
        print(f"    context: {result['context_tokens']} tokens (its own message list)")
        for fact in result["facts"]:
            print(f"    - {fact['text']}  [{', '.join(fact['sources'])}]")
    tokens = out["context_tokens"]
    print(f"\norchestrator context: {tokens['orchestrator']} tokens (task + distilled results)")
    print(f"facts merged across workers: {len(out['facts'])}")
