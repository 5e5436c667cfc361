"""Delegation: what a sub-agent may see (its budgeted brief) and what it hands back (a
distilled, structured result), so an orchestrator's context stays small however many
workers it runs."""
