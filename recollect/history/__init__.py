"""Bounded conversation history: the window, pinned values, the summary fold, checkpoints."""
