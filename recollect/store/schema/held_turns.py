"""A turn's buffered messages wait, held, until the transaction that checkpoints the turn
releases them; a held row is never read by the worker, and a turn that failed is never
released (its rows go with the thread's next turn, or with the user's erasure)."""

from __future__ import annotations

HELD_TURNS_SQL = """
ALTER TABLE memory_job_messages ADD COLUMN held boolean NOT NULL DEFAULT false;
ALTER TABLE memory_job_messages ADD COLUMN schedule jsonb;
"""
