"""The DDL of each subsystem's tables and policies, applied in order by `migrations`."""
