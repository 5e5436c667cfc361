"""What `recollect chat` says when a turn failed on the database and is about to be retried.

A full pool and a lost connection look alike to the retry loop (both are a `PoolTimeout` or an
`OperationalError`), but they call for different remedies: a restart fixes itself, a pool that
is too small for the load does not, so its line says so and names the settings to raise.
"""

from __future__ import annotations

from recollect.store.budget import ASYNC_POOL_SIZE_ENV, POOL_SIZE_ENV
from recollect.store.errors import PoolExhaustedError


def failure_reason(exc: BaseException) -> str:
    """The first line of the error, or its type when it has no message."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def retry_notice(exc: BaseException, delay_s: float) -> str:
    """The one stderr line printed before waiting `delay_s` and trying the turn again."""
    if isinstance(exc, PoolExhaustedError):
        return (
            f"recollect: the connection pool is full ({failure_reason(exc)}); retrying in "
            f"{delay_s:.0f}s — if this repeats, raise {POOL_SIZE_ENV} / {ASYNC_POOL_SIZE_ENV}"
        )
    reason = failure_reason(exc)
    return f"recollect: database connection lost ({reason}); retrying in {delay_s:.0f}s"


def gave_up_message(exc: BaseException) -> str:
    """The error a turn ends with once its retries are spent."""
    if isinstance(exc, PoolExhaustedError):
        what = f"the connection pool stayed full ({failure_reason(exc)})"
    else:
        what = f"the database is unavailable ({failure_reason(exc)})"
    return f"{what}; the conversation is saved up to the last reply, run the same command to resume"
