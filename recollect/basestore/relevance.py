"""How a query search scores an item: a relevance in [0, 1] that a caller can threshold.

The score is the cosine similarity of the query's and the item's embeddings, calibrated on
the embedder's relevance floor (the cosine from which recall counts a match as on topic; the
offline embedder measured 0.78): a logistic that gives 0.5 at the floor, about 0.9 a quarter
of the way from the floor to 1, and about 0.1 as far below it. So 0.5 is the threshold that
means "on topic" whatever the embedder's cosines look like (e5's are compressed into 0.7-0.9).
An embedder that states no floor is calibrated at cosine 0. An item without an embedding (no
embedder, or it failed when the item was written) scores the share of the query's content
words it contains; a query with no content word ("is it") scores every item 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from recollect.longterm.duplicates import content_words

STEEPNESS = 8.0
"""How sharply the score turns at the floor: the cosine range above the floor, over this, is
one logistic unit (0.0275 of cosine for a 0.78 floor)."""


def calibrated(similarity: float, floor: float) -> float:
    """A cosine in [-1, 1] as a relevance in [0, 1]: 0.5 at `floor` (taken in [0, 1))."""
    floor = min(max(floor, 0.0), 0.99)
    z = (similarity - floor) * STEEPNESS / (1.0 - floor)
    if z < -700:  # exp would overflow; the score is 0 to any precision shown
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def word_coverage(query: str, text: str) -> float:
    """The share of the query's content words (stemmed, no stop words) found in `text`."""
    wanted = content_words(query)
    if not wanted:
        return 0.0
    return len(wanted & content_words(text)) / len(wanted)


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity of two vectors of one size (None when they cannot be compared)."""
    if len(a) != len(b):
        return None
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norms == 0:
        return None
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms
