"""The orchestrator's steps: plan, one worker per subtask, synthesise, remember."""
