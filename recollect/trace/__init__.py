"""Per-turn memory traces: what went into each prompt and why, and the metrics drawn from them."""
