"""Creating the roles and granting them their rights: the migrating owner's part.

A database owner with CREATEROLE and no superuser (what managed Postgres gives) creates the
roles itself. Without CREATEROLE, a DBA creates them beforehand with the SQL of `roles_sql`
(printed by `recollect db roles-sql`), and migrating only checks them. Either way no role we
make can log in as a superuser or bypass row-level security.
"""

from __future__ import annotations

import os
from typing import Any

import psycopg
from psycopg import Connection, sql

from recollect.store.errors import RoleSetupError
from recollect.store.roles import RoleNames
from recollect.store.schema.approval_authority import limit_app_role
from recollect.store.schema.uuids import UUID_V7_SIGNATURE

ROLES_SQL_COMMAND = "recollect db roles-sql"
ROLE_ATTRIBUTES = "NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE"

ROLE_EXISTS = "SELECT 1 FROM pg_roles WHERE rolname = %s"
MAY_CREATE_ROLES = (
    "SELECT rolsuper OR rolcreaterole AS may FROM pg_roles WHERE rolname = current_user"
)
MAY_SET_ROLE = "SELECT pg_has_role(%s, %s, 'SET') AS may"
HAS_RIGHTS_OF = "SELECT pg_has_role(%s, %s, 'USAGE') AS has"
MAY_ADMINISTER = "SELECT pg_has_role(current_user, %s, 'MEMBER WITH ADMIN OPTION') AS may"
CREATE_ROLE = "CREATE ROLE {} {} " + ROLE_ATTRIBUTES
SET_PASSWORD = "ALTER ROLE {} PASSWORD {}"

GRANTS = (
    "GRANT CONNECT ON DATABASE {database} TO {role}",
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
    "REVOKE INSERT, UPDATE, DELETE ON recollect_migrations FROM {role}",
    "REVOKE INSERT, UPDATE, DELETE ON checkpoint_migrations FROM {role}",
    "GRANT EXECUTE ON FUNCTION recollect_thread_visible(text) TO {role}",
    "GRANT EXECUTE ON FUNCTION recollect_claim_own_job(uuid, float8, text, boolean) TO {role}",
    "GRANT EXECUTE ON FUNCTION recollect_fail_job(bigint, uuid, text, integer, float8) TO {role}",
    f"GRANT EXECUTE ON FUNCTION {UUID_V7_SIGNATURE} TO {{role}}",
)
"""The app role's rights, run after every migration: DML on every table, and what it may call
(the worker role has them through its membership)."""


def ensure_roles(conn: Connection[Any], roles: RoleNames) -> None:
    """Create the missing roles (or say who must), and the two memberships migrating needs:
    the owner may act as the definer (to hand it functions), the worker has the app's rights."""
    may_create = bool(_value(conn, MAY_CREATE_ROLES))
    for role, login in ((roles.definer, False), (roles.worker, True), (roles.app, True)):
        if conn.execute(ROLE_EXISTS, (role,)).fetchone():
            continue
        if not may_create:
            raise RoleSetupError(
                f"role {role} does not exist and {_current_user(conn)} may not create roles: "
                f"have a DBA run the SQL from `{ROLES_SQL_COMMAND}`, then migrate again"
            )
        ident = sql.Identifier(role)
        login_sql = sql.SQL("LOGIN" if login else "NOLOGIN")
        conn.execute(sql.SQL(CREATE_ROLE).format(ident, login_sql))
    owner = _current_user(conn)
    if not _value(conn, MAY_SET_ROLE, owner, roles.definer):
        _grant(conn, roles.definer, owner)
    if not _value(conn, HAS_RIGHTS_OF, roles.worker, roles.app):
        _grant(conn, roles.app, roles.worker)
    _set_password(conn, roles.app, os.environ.get("RECOLLECT_APP_PASSWORD"))
    _set_password(conn, roles.worker, os.environ.get("RECOLLECT_WORKER_PASSWORD"))


def grant_rights(conn: Connection[Any], roles: RoleNames) -> None:
    """Grant the app role DML on every table we have and what it may call (after DDL)."""
    database = _value(conn, "SELECT current_database() AS d")
    role = sql.Identifier(roles.app)
    for grant in GRANTS:
        conn.execute(sql.SQL(grant).format(database=sql.Identifier(database), role=role))
    limit_app_role(conn, roles.app)


def roles_sql(roles: RoleNames, owner: str) -> str:
    """What a DBA runs once when the migrating owner may not create roles."""
    app_password = os.environ.get("RECOLLECT_APP_PASSWORD") or "app-password-here"
    worker_password = os.environ.get("RECOLLECT_WORKER_PASSWORD") or "worker-password-here"
    return "\n".join(
        (
            f"CREATE ROLE {roles.definer} NOLOGIN {ROLE_ATTRIBUTES};",
            f"CREATE ROLE {roles.worker} LOGIN PASSWORD {_literal(worker_password)} "
            f"{ROLE_ATTRIBUTES};",
            f"CREATE ROLE {roles.app} LOGIN PASSWORD {_literal(app_password)} {ROLE_ATTRIBUTES};",
            f"GRANT {roles.definer} TO {owner};",
            f"GRANT {roles.app} TO {roles.worker};",
        )
    )


def _grant(conn: Connection[Any], role: str, member: str) -> None:
    try:
        conn.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(role), sql.Identifier(member)))
    except psycopg.errors.InsufficientPrivilege as exc:
        raise RoleSetupError(
            f"{_current_user(conn)} may not grant {role} to {member}: have a DBA run "
            f"`GRANT {role} TO {member};` (see `{ROLES_SQL_COMMAND}`), then migrate again"
        ) from exc


def _set_password(conn: Connection[Any], role: str, password: str | None) -> None:
    """Set a role's password from the environment where the owner may; a role a DBA made
    keeps the password the DBA gave it."""
    if not password or not _value(conn, MAY_CREATE_ROLES) or not _value(conn, MAY_ADMINISTER, role):
        return
    conn.execute(sql.SQL(SET_PASSWORD).format(sql.Identifier(role), sql.Literal(password)))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _current_user(conn: Connection[Any]) -> str:
    return str(_value(conn, "SELECT current_user AS u"))


def _value(conn: Connection[Any], query: str, *params: Any) -> Any:
    row = conn.execute(query, params or None).fetchone()
    assert row is not None
    return next(iter(row.values())) if isinstance(row, dict) else row[0]
