"""A served store search without a namespace prefix is one 422 line, not a 500."""

from __future__ import annotations

from recollect.basestore.search_shape import search_refusal


def test_a_search_must_name_its_prefix() -> None:
    for body in (b"{}", b"", b"[]", b'{"namespace_prefix": "acme"}', b"{not json"):
        assert search_refusal(body) is not None, body
    for body in (b'{"namespace_prefix": []}', b'{"namespace_prefix": ["acme", "ana"], "limit": 5}'):
        assert search_refusal(body) is None, body
