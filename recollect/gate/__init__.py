"""The gate: what may be kept of what a user said, and in what form.

One package that every channel which stores or re-prompts a user's words goes through:
extraction's fact screen, the pinned values, the summary fold, the profile, episodes, traces,
candidate records and exports. `mask_secrets` takes credentials out of any text; `redact`
replaces personal identifiers with placeholders; `screen` gives the reasons a text would act
as an instruction rather than a fact. It sits under extraction, history, memory and traces,
and imports none of them.
"""

from recollect.gate.redaction import redact
from recollect.gate.screening import ruled_injection, screen
from recollect.gate.secrets import has_secret, mask_secrets, mask_secrets_in

__all__ = ["has_secret", "mask_secrets", "mask_secrets_in", "redact", "ruled_injection", "screen"]
