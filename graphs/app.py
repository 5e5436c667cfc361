"""The HTTP app `langgraph.json` → `http.app` names: no routes of its own; its lifespan runs
the extraction worker beside the API (`recollect.engine.server_worker`), and its middleware
runs in front of every route LangGraph serves, including the ones its `Auth` never sees:
a request with two differing credentials refused (`recollect/auth/one_credential.py`), the
server's operator routes closed (`recollect/auth/operator_routes.py`), a body too large, too
deep or holding text the database cannot store refused (`recollect/auth/bounded_json.py`), a
thread create that names its own id refused (`recollect/auth/thread_ids.py`) and a malformed
store search refused with a 422 (`recollect/basestore/search_shape.py`)."""

from __future__ import annotations

from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.middleware import Middleware

from graphs.auth import authenticate
from recollect.auth.api_keys import AuthenticationError
from recollect.auth.bounded_json import BoundedJson
from recollect.auth.identity import Identity
from recollect.auth.one_credential import OneCredential
from recollect.auth.operator_routes import OperatorRoutes
from recollect.auth.served import identity_of
from recollect.auth.thread_ids import ServerChosenThreadIds
from recollect.auth.unavailable import DatabaseUnavailable
from recollect.engine import StoreSearchShape, server_worker


async def identify(authorization: str | None) -> Identity | None:
    """The caller by the API's own `authenticate`, so one check decides every route."""
    try:
        user = await authenticate(authorization)
    except Auth.exceptions.HTTPException as exc:
        raise AuthenticationError(str(exc.detail)) from exc
    return identity_of(user)


app = Starlette(
    lifespan=server_worker,
    middleware=[
        Middleware(DatabaseUnavailable),
        Middleware(OneCredential),
        Middleware(OperatorRoutes, identify=identify),
        Middleware(BoundedJson),
        Middleware(ServerChosenThreadIds),
        Middleware(StoreSearchShape),
    ],
)
