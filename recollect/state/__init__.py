"""The memory's typed state and run settings; import them from `recollect`."""
