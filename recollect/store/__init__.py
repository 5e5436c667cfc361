"""Postgres: the embedded server, pools, migrations, roles, tenant scope, clock and errors."""
