"""Pseudonymising a person's actions is erasure's work, not a request's.

`recollect_forget_actor()` rewrites every audit row, decision and refund that names the
calling scope's user, across her organisation's workflows. Any app session could once call it
for itself, so a served request (or a graph step) could erase its own caller's trail. From
here it belongs to the worker role, which the erasure command (`recollect memory forget`)
connects as; the app role, which serves requests, may not call it.
"""

from __future__ import annotations

from recollect.store.roles import RoleNames
from recollect.store.schema.approval_authority import FORGET_SIGNATURE


def forget_actor_for_maintenance(roles: RoleNames) -> str:
    """The grant moves from the app role to the worker role."""
    return (
        f"REVOKE EXECUTE ON FUNCTION {FORGET_SIGNATURE} FROM {roles.app};\n"
        f"GRANT EXECUTE ON FUNCTION {FORGET_SIGNATURE} TO {roles.worker};\n"
    )
