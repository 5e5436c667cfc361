"""The `recollect` command."""
