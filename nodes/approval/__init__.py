"""The approval workflow's steps, one per file; each applies one transition of the table."""
