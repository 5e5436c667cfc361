"""`langgraph dev` with a reviewer's key: read the organisation's workflows and decide them,
nothing else.

Dana asks for a refund; Maria, a reviewer, reads it and tries every other thread action on
it: rewriting its state or metadata, deleting it, running it with new input, jumping, replaying
an older checkpoint, starting threads of her own. All are refused, Dana's request is what she
sent, and Maria's decision then completes the workflow.
"""

from __future__ import annotations

import psycopg

from recollect.store.server import CONNECTION_KWARGS
from tests.support.langgraph_dev import DANA_KEY, MARIA_KEY, client_for, status_of

REQUEST = {"order_id": "8842-B", "amount": "249", "reason": "charged twice"}
REFUSED = (403, 404)
DECISION = {"decision": "approve", "by": "maria", "note": "verified"}


def test_a_reviewer_reads_and_decides_and_does_nothing_else(
    served_module: str, module_database_uri: str
) -> None:
    dana = client_for(served_module, DANA_KEY)
    maria = client_for(served_module, MARIA_KEY)
    thread = dana.threads.create()["thread_id"]
    started = dana.runs.wait(thread, "approval", input={"request": REQUEST})
    assert isinstance(started, dict)
    assert started["workflow_state"] == "submitted_for_review"
    history = dana.threads.get_history(thread, limit=50)
    older = history[-1]["checkpoint"]["checkpoint_id"]

    assert maria.threads.get(thread)["thread_id"] == thread
    assert maria.threads.get_state(thread)["values"]["request"]["amount"] == "249.00"
    assert thread in [t["thread_id"] for t in maria.threads.search(limit=100)]

    forged = {"request": {**REQUEST, "amount": "99999"}}
    assert status_of(lambda: maria.threads.update_state(thread, forged)) in REFUSED
    assert (
        status_of(lambda: maria.threads.update(thread, metadata={"owner": "acme/maria"})) in REFUSED
    )
    assert status_of(lambda: maria.threads.update(thread, metadata={"note": "x"})) in REFUSED
    assert status_of(lambda: maria.threads.delete(thread)) in REFUSED
    assert status_of(lambda: maria.threads.create()) == 403
    for kwargs in (
        {"input": {"request": {**REQUEST, "amount": "99999"}}},
        {"command": {"resume": DECISION, "update": forged}},
        {"command": {"goto": "execute"}},
        {"command": {"resume": DECISION}, "checkpoint_id": older},
    ):
        status = status_of(lambda k=kwargs: maria.runs.wait(thread, "approval", **k))
        assert status == 403, kwargs

    assert dana.threads.get_state(thread)["values"]["request"]["amount"] == "249.00"
    assert dana.threads.get(thread)["metadata"]["owner"] == "acme/dana"
    finished = maria.runs.wait(thread, "approval", command={"resume": DECISION})
    assert isinstance(finished, dict)
    assert finished["workflow_state"] == "completed"
    with psycopg.connect(module_database_uri, **CONNECTION_KWARGS) as conn:
        refunds = conn.execute(
            "SELECT approved_by, amount::text AS amount FROM refunds WHERE workflow_id = %s",
            (thread,),
        ).fetchall()
    assert refunds == [{"approved_by": "maria", "amount": "249.00"}]
