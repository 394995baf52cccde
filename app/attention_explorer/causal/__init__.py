"""Ask the model why (issue 29): activation patching between a clean and a corrupted prompt
(:func:`patch`), the logit lens (:func:`logit_lens`) and each head's direct effect on a logit
(:func:`head_attribution`). Built on the model run's own steps (``pretrained/forward.py``,
``pretrained/kernel.py``); never Qt. Results are small frozen dataclasses of numpy arrays
with their axes' names and the tokens, for the window's views and the command line.
"""

from __future__ import annotations

from .attribution import AttributionResult, head_attribution
from .errors import CausalError, PatchCancelled
from .lens import LensResult, logit_lens
from .patching import SITES, PatchResult, check_patch, patch, patch_estimate

__all__ = [
    "SITES",
    "AttributionResult",
    "CausalError",
    "LensResult",
    "PatchCancelled",
    "PatchResult",
    "check_patch",
    "head_attribution",
    "logit_lens",
    "patch",
    "patch_estimate",
]
