"""Human-gated workflows: the state machine, its records, its store and its errors."""
