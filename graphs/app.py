"""The HTTP app `langgraph.json` → `http.app` names: no routes of its own, only the middleware
that closes the server's operator routes (`recollect/auth/operator_routes.py`), which runs in
front of every route LangGraph serves, including the ones its `Auth` never sees."""

from __future__ import annotations

from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.middleware import Middleware

from graphs.auth import authenticate
from recollect.auth.api_keys import AuthenticationError
from recollect.auth.identity import Identity
from recollect.auth.operator_routes import OperatorRoutes
from recollect.auth.served import identity_of


async def identify(authorization: str | None) -> Identity | None:
    """The caller by the API's own `authenticate`, so one check decides every route."""
    try:
        user = await authenticate(authorization)
    except Auth.exceptions.HTTPException as exc:
        raise AuthenticationError(str(exc.detail)) from exc
    return identity_of(user)


app = Starlette(middleware=[Middleware(OperatorRoutes, identify=identify)])
