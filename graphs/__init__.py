"""Graph builders; each module exports `builder`, `graph` and `make_graph`."""
