"""Side-by-side benchmarks; each module answers one question and writes JSON."""
