"""From conversation to candidate facts: the model call, validation, the job queue and worker."""
