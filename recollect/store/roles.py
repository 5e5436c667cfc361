"""The role the application connects as: it owns nothing, so row-level security binds it.

Table owners and superusers bypass RLS; migrations therefore run on the admin connection and
the app's pool logs in as `RECOLLECT_APP_ROLE` (default `recollect_app`), which only has DML
rights granted on our tables.
"""

from __future__ import annotations

import os
import re
from typing import Any

from psycopg import Connection, sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from recollect.store.schema.definers import WORKER_ROLE

DEFAULT_APP_ROLE = "recollect_app"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

ROLE_EXISTS = "SELECT 1 FROM pg_roles WHERE rolname = %s"
CREATE_ROLE = "CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE"
SET_PASSWORD = "ALTER ROLE {} PASSWORD {}"
GRANTS = (
    "GRANT CONNECT ON DATABASE {database} TO {role}",
    "GRANT USAGE ON SCHEMA public TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
    "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role}",
    "REVOKE INSERT, UPDATE, DELETE ON recollect_migrations FROM {role}",
    "REVOKE INSERT, UPDATE, DELETE ON checkpoint_migrations FROM {role}",
)
FUNCTION_GRANTS = (
    "GRANT {role} TO {worker}",
    "GRANT EXECUTE ON FUNCTION recollect_thread_visible(text) TO {role}",
    "GRANT EXECUTE ON FUNCTION recollect_claim_own_job(uuid, float8, text, boolean) TO {role}",
    "GRANT EXECUTE ON FUNCTION recollect_fail_job(bigint, uuid, text, integer, float8) TO {role}",
)
"""What the app role may call, and the worker role's membership in it (its DML rights)."""


def app_role() -> str:
    """The configured role name, validated: it is spliced into DDL."""
    role = os.environ.get("RECOLLECT_APP_ROLE") or DEFAULT_APP_ROLE
    if not _IDENTIFIER.match(role):
        raise ValueError(f"RECOLLECT_APP_ROLE must be a lower-case SQL identifier, got {role!r}")
    return role


def app_uri(admin_uri: str) -> str:
    """`RECOLLECT_APP_DATABASE_URI`, else the admin URI logged in as the app role instead."""
    explicit = os.environ.get("RECOLLECT_APP_DATABASE_URI")
    if explicit:
        return explicit
    params = conninfo_to_dict(admin_uri)
    params.pop("password", None)
    password = os.environ.get("RECOLLECT_APP_PASSWORD")
    if password:
        params["password"] = password
    params["user"] = app_role()
    return make_conninfo("", **params)


def worker_uri(admin_uri: str) -> str:
    """`RECOLLECT_WORKER_DATABASE_URI`, else the admin URI logged in as the worker role: the
    background worker and operator commands, which act across tenants through the definer
    functions only."""
    explicit = os.environ.get("RECOLLECT_WORKER_DATABASE_URI")
    if explicit:
        return explicit
    params = conninfo_to_dict(admin_uri)
    params.pop("password", None)
    password = os.environ.get("RECOLLECT_WORKER_PASSWORD")
    if password:
        params["password"] = password
    params["user"] = WORKER_ROLE
    return make_conninfo("", **params)


def ensure_app_role(conn: Connection[Any]) -> str:
    """Create the role if missing and grant it DML on every table we have (run after DDL)."""
    role = app_role()
    ident = sql.Identifier(role)
    if not conn.execute(ROLE_EXISTS, (role,)).fetchone():
        conn.execute(sql.SQL(CREATE_ROLE).format(ident))
    password = os.environ.get("RECOLLECT_APP_PASSWORD")
    if password:
        conn.execute(sql.SQL(SET_PASSWORD).format(ident, sql.Literal(password)))
    database = conn.execute("SELECT current_database() AS d").fetchone()
    assert database is not None
    name = next(iter(database.values())) if isinstance(database, dict) else database[0]
    for grant in GRANTS:
        conn.execute(sql.SQL(grant).format(database=sql.Identifier(name), role=ident))
    worker = sql.Identifier(WORKER_ROLE)
    worker_password = os.environ.get("RECOLLECT_WORKER_PASSWORD")
    if worker_password:
        conn.execute(sql.SQL(SET_PASSWORD).format(worker, sql.Literal(worker_password)))
    for grant in FUNCTION_GRANTS:
        conn.execute(sql.SQL(grant).format(role=ident, worker=worker))
    return role
