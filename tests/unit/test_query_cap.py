"""A recall query is cut to the embedder's window before it is embedded."""

from __future__ import annotations

from recollect.models.embeddings import QUERY_MAX_CHARS, capped_query


def test_a_long_query_keeps_its_head_and_tail_within_the_cap() -> None:
    text = "HEAD " + "middle " * 20_000 + " TAIL?"
    capped = capped_query(text)
    assert len(capped) <= QUERY_MAX_CHARS
    assert capped.startswith("HEAD")
    assert capped.endswith("TAIL?")
    assert capped_query("short question") == "short question"


def test_undecodable_input_never_breaks_embedding() -> None:
    broken = "order 8842-B \udcff\udcfe"  # what surrogateescape makes of invalid UTF-8
    capped = capped_query(broken)
    capped.encode("utf-8")  # would raise UnicodeEncodeError on a lone surrogate
    assert capped.startswith("order 8842-B")
