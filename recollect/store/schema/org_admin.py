"""Writing the organisation's shared memory needs the `org_admin` permission.

Until here any member acting in the organisation scope could insert, change or delete the
organisation's shared facts and store items. Now the writing transaction must also carry
`app.org_admin = 'on'` (set by `scoped` from the scope's permissions), so a member without it
reads shared memory and changes none of it, whatever path the write takes (the engine, the
store, or SQL on the app role's connection).

A store item also records who last wrote it: `written_by` defaults to the writing
transaction's user (`app.user_id`), and every put sets it again. Items written before this
step have none.
"""

from __future__ import annotations

from recollect.store.identity import MAX_ID_LENGTH
from recollect.store.scope import ORG_OWNER

SHARED_ROWS = f"user_id = '{ORG_OWNER}' AND org_id = current_setting('app.org_id', true)"
ORG_ADMIN_WRITER = (
    f"{SHARED_ROWS} AND current_setting('app.scope_kind', true) = 'org' "
    "AND current_setting('app.org_admin', true) = 'on'"
)


def _writer_policies(table: str) -> str:
    return f"""
DROP POLICY org_shared_inserts ON {table};
DROP POLICY org_shared_updates ON {table};
DROP POLICY org_shared_deletes ON {table};
CREATE POLICY org_shared_inserts ON {table} FOR INSERT WITH CHECK ({ORG_ADMIN_WRITER});
CREATE POLICY org_shared_updates ON {table} FOR UPDATE USING ({ORG_ADMIN_WRITER})
    WITH CHECK ({ORG_ADMIN_WRITER});
CREATE POLICY org_shared_deletes ON {table} FOR DELETE USING ({ORG_ADMIN_WRITER});
"""


ORG_ADMIN_WRITES_SQL = (
    _writer_policies("facts")
    + _writer_policies("store_items")
    + f"""
ALTER TABLE store_items ADD COLUMN written_by text
    DEFAULT nullif(current_setting('app.user_id', true), '')
    CHECK (length(written_by) <= {MAX_ID_LENGTH});
"""
)
