"""The newer attention variants as engine stages: QK-norm (:mod:`.qk_norm`, its weights kept
in step with the sizes in :mod:`.norm_weights`), the score soft cap (:mod:`.softcap`),
attention sinks' learned logit in each softmax row (:mod:`.sink_logit`, gpt-oss: the
``sink_weight`` stage) and their cell arithmetic (:mod:`.explain_steps`)."""
