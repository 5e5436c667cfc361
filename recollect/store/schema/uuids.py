"""Time-ordered ids on every supported Postgres.

Postgres 18 has `uuidv7()`; 16 and 17 do not. `recollect_uuidv7()` builds the same layout
(RFC 9562): 48 bits of Unix milliseconds, the version, 12 bits of sub-millisecond fraction
(so ids made one after another sort in order, as 18's do), then random bits and the variant
taken from `gen_random_uuid()`.
"""

from __future__ import annotations

UUID_V7_FUNCTION = """
CREATE OR REPLACE FUNCTION recollect_uuidv7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
SELECT encode(overlay(uuid_send(gen_random_uuid())
                      PLACING substring(int8send(floor(t.ms)::bigint) FROM 3)
                              || int2send((28672 + floor((t.ms - floor(t.ms)) * 4096))::smallint)
                      FROM 1 FOR 8), 'hex')::uuid
FROM (SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms) AS t
$$;
"""
"""Version 7 (0x7 in the high nibble of byte 6: 28672 = 0x7000) and the variant from v4."""

UUID_V7_SIGNATURE = "recollect_uuidv7()"
