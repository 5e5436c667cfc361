"""Graph nodes, one per file; they call `recollect.memory` and never build SQL."""
