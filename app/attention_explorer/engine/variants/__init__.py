"""The newer attention variants as engine stages: QK-norm (:mod:`.qk_norm`, its weights kept
in step with the sizes in :mod:`.norm_weights`), the score soft cap (:mod:`.softcap`) and
their cell arithmetic (:mod:`.explain_steps`)."""
