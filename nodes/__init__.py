"""Graph nodes, one per file; they call the `recollect` engine and never build SQL."""
