"""Organisation-shared facts ("we deploy on Fridays", team conventions) behind row-level
security.

They are stored under the reserved user `ORG_OWNER`, so the engine's per-scope statements and
the tenant lexeme of full-text search work for them unchanged (`Scope.owner_id`). Two more
policies on `facts` (permissive policies are OR-ed with the per-user one):
- any user of the organisation reads its shared rows;
- only a transaction in the organisation scope (`app.scope_kind = 'org'`, set by `scoped`)
  inserts, changes or deletes them, so a user-scoped write can never land in shared memory.
"""

from __future__ import annotations

from recollect.store.scope import ORG_OWNER

_SHARED = (
    f"user_id = '{ORG_OWNER}' AND org_id = current_setting('app.org_id', true)"
)  # fmt: skip
_ORG_WRITER = f"{_SHARED} AND current_setting('app.scope_kind', true) = 'org'"

ORG_SHARED_FACTS_SQL = f"""
CREATE POLICY org_shared_reads ON facts FOR SELECT USING ({_SHARED});
CREATE POLICY org_shared_inserts ON facts FOR INSERT WITH CHECK ({_ORG_WRITER});
CREATE POLICY org_shared_updates ON facts FOR UPDATE USING ({_ORG_WRITER})
    WITH CHECK ({_ORG_WRITER});
CREATE POLICY org_shared_deletes ON facts FOR DELETE USING ({_ORG_WRITER});
"""
