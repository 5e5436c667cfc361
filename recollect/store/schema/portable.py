"""Ids that need no Postgres 18, and row-level security FORCEd alike on every table.

Databases made before this step take their ids from 18's built-in `uuidv7()`; from here on
they use `recollect_uuidv7()`, which every supported server has. The tables that were only
ENABLEd (`memory_jobs`, the approval tables, LangGraph's checkpoint tables) were so because
functions owned by the migrating role once had to see every row; those functions now belong
to the definer role, which reaches its rows through policies of its own, so the owner is bound
like everyone else (and sees every row only while it migrates: `every_row`).
"""

from __future__ import annotations

from recollect.store.schema.uuids import UUID_V7_FUNCTION, UUID_V7_SIGNATURE

ONCE_ENABLED_ONLY = (
    "memory_jobs",
    "approval_workflows",
    "approval_audit",
    "refunds",
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
)

PORTABLE_IDS_AND_FORCED_SECURITY = f"""
{UUID_V7_FUNCTION}
REVOKE ALL ON FUNCTION {UUID_V7_SIGNATURE} FROM PUBLIC;
ALTER TABLE facts ALTER COLUMN id SET DEFAULT recollect_uuidv7();
ALTER TABLE episodes ALTER COLUMN id SET DEFAULT recollect_uuidv7();
""" + "".join(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY;\n" for table in ONCE_ENABLED_ONLY)
