"""Long-term memory: facts, profiles and episodes; how they are written, recalled and ranked."""
