"""The roles the application connects as, and the URIs that log in as them.

Table owners and superusers bypass row-level security, so migrations run on the admin (owner)
connection while requests are served as roles that own nothing:
- the app role (`<prefix>_app`, or `RECOLLECT_APP_ROLE`): DML on our tables, under the policies;
- the worker role (`<prefix>_worker`): a member of the app role that may also call the
  cross-tenant job functions;
- the definer role (`<prefix>_definer`, no login): owns those functions and nothing else.

Role names are cluster-wide, so `RECOLLECT_ROLE_PREFIX` (default `recollect`) keeps two
deployments on one cluster apart. It is chosen when a database is first migrated.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from recollect.store.errors import ConfigurationError

ROLE_PREFIX_ENV = "RECOLLECT_ROLE_PREFIX"
APP_ROLE_ENV = "RECOLLECT_APP_ROLE"
DEFAULT_PREFIX = "recollect"
DEFAULT_APP_ROLE = f"{DEFAULT_PREFIX}_app"
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_PREFIX = re.compile(r"^[a-z_][a-z0-9_]{0,53}$")


@dataclass(frozen=True)
class RoleNames:
    """The three roles of one deployment."""

    app: str
    worker: str
    definer: str


def role_names() -> RoleNames:
    """The configured names, validated: they are spliced into DDL."""
    prefix = os.environ.get(ROLE_PREFIX_ENV) or DEFAULT_PREFIX
    if not _PREFIX.match(prefix):
        raise ConfigurationError(
            f"{ROLE_PREFIX_ENV} must be a lower-case SQL identifier of at most 54 characters, "
            f"got {prefix!r}"
        )
    app = os.environ.get(APP_ROLE_ENV) or f"{prefix}_app"
    if not _IDENTIFIER.match(app):
        raise ConfigurationError(f"{APP_ROLE_ENV} must be a lower-case SQL identifier, got {app!r}")
    return RoleNames(app=app, worker=f"{prefix}_worker", definer=f"{prefix}_definer")


def app_role() -> str:
    """The app role's name."""
    return role_names().app


def app_uri(admin_uri: str) -> str:
    """`RECOLLECT_APP_DATABASE_URI`, else the admin URI logged in as the app role instead."""
    return _login_as(admin_uri, "RECOLLECT_APP_DATABASE_URI", "RECOLLECT_APP_PASSWORD", app_role())


def worker_uri(admin_uri: str) -> str:
    """`RECOLLECT_WORKER_DATABASE_URI`, else the admin URI logged in as the worker role: the
    background worker and operator commands, which act across tenants through the definer
    functions only."""
    return _login_as(
        admin_uri,
        "RECOLLECT_WORKER_DATABASE_URI",
        "RECOLLECT_WORKER_PASSWORD",
        role_names().worker,
    )


def _login_as(admin_uri: str, uri_variable: str, password_variable: str, role: str) -> str:
    explicit = os.environ.get(uri_variable)
    if explicit:
        return explicit
    params = conninfo_to_dict(admin_uri)
    params.pop("password", None)
    password = os.environ.get(password_variable)
    if password:
        params["password"] = password
    params["user"] = role
    return make_conninfo("", **params)


ROLE_VARIABLES = {
    "app": ("RECOLLECT_APP_PASSWORD", "RECOLLECT_APP_DATABASE_URI"),
    "worker": ("RECOLLECT_WORKER_PASSWORD", "RECOLLECT_WORKER_DATABASE_URI"),
}
"""What an operator sets when a role cannot log in: its password, or a URI of its own."""
_LOGIN_REFUSED = ("password authentication failed", "no password supplied", "does not exist")


def login_hint(kind: str, reason: str) -> str | None:
    """What to set when the app or worker role could not log in, or None for other causes."""
    if not any(words in reason for words in _LOGIN_REFUSED) or "database" in reason:
        return None
    password, uri = ROLE_VARIABLES[kind]
    role = role_names().app if kind == "app" else role_names().worker
    return (
        f"The {kind} role {role} could not log in: set {password} to its password (or "
        f"{uri}), and run `recollect db migrate` once if the role was never created."
    )
