"""Model > Why?: ask the loaded model why it predicts what it does (issue 29) — patching
from a second prompt, the logit lens, head attribution beside the knockout sweep, and
attention beside cause. Views over model mode's state; the numbers come from
``attention_explorer.causal`` and ``pretrained``, computed on worker threads."""
