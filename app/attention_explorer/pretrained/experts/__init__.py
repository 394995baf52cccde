"""Mixture-of-experts feed-forwards (Qwen3-MoE, OLMoE, gpt-oss, DeepSeek-V3), run once
against the architecture record: no code asks which family it is.

The contract a family file follows
----------------------------------
Set ``experts=`` on the family's :class:`~attention_explorer.pretrained.architecture.
Architecture` to an :class:`~.plan.ExpertsPlan`; :mod:`.plans` has the four ready-made ones
(``plans.QWEN3_MOE``, ``plans.OLMOE``, ``plans.GPT_OSS``, ``plans.DEEPSEEK_V3``), which a
family uses as they are (or ``dataclasses.replace`` s). Its fields:

- ``rule``: ``"softmax_topk"`` (reads ``norm_topk_prob``), ``"topk_softmax"`` (nothing
  more; the router has a bias) or ``"sigmoid_grouped"`` (reads ``n_group``, ``topk_group``,
  ``norm_topk_prob``, ``routed_scaling_factor`` and the ``router_score_bias`` tensor);
  all read ``count_keys`` (the first present: ``num_experts``, ``num_local_experts``,
  ``n_routed_experts``), ``top_k_key`` (``num_experts_per_tok``) and ``width_key`` (each
  expert's inner width: ``moe_intermediate_size``, or ``intermediate_size``);
- ``kind``: ``"gated"`` (``down(act(gate x) * up x)``, the record's activation) or
  ``"clamped_swiglu"`` (gpt-oss: reads ``swiglu_limit``, ``swiglu_alpha``);
- ``router_bias``, ``expert_bias``: whether those linears have biases (refused otherwise);
- ``tensors``: role -> checkpoint name (``{i}`` the layer, ``{j}`` the expert), roles
  (:data:`.plan.EXPERT_ROLES`): ``router``, ``router_score_bias``, ``expert_gate``,
  ``expert_up``, ``expert_down`` (per expert, ``nn.Linear`` modules), ``experts_gate_up``,
  ``experts_down`` (fused 3-D tensors; ``fused_layout`` "interleaved"|"blocks",
  ``fused_orientation`` "in_out"|"out_in"; biases named ``<name>_bias``), ``shared_gate``,
  ``shared_up``, ``shared_down`` (shared experts, width ``n_shared * f``);
- ``shared_key``: the shared experts' count key (``n_shared_experts``) or None;
- ``sparse(config, layer)`` (+ ``layer_keys``): which layers are routed; the others run the
  record's dense MLP (roles ``ffn_gate``/``ffn_in``/``ffn_out`` at ``intermediate_size``);
- ``accepted``/``refused``/``defaults``: keys checked by name (``quantization_config`` is
  refused), values implemented, the config class's defaults.

The config is checked with the record (:func:`.check.check_experts`, from
``architecture.check_config``); the reader (:func:`.reading.expert_weights`, from
``checkpoint/weights.py``) fills the ``LayerWeights`` fields ``W_router [d, E]``,
``b_router``, ``router_score_bias [E]``, ``W_experts_gate``/``W_experts_in [E, d, f]``,
``W_experts_out [E, f, d]``, ``b_experts_*``, ``W_shared_gate``/``W_shared_in [d, S f]``,
``W_shared_out [S f, d]`` (a routed layer's ``W_in``/``W_out`` are None), reading whichever
layout the file holds; ``forward.feed_forward`` runs :func:`.compute.routed_feed_forward`
for any layer whose ``W_router`` is set. :func:`.record.recording` collects the router's
choice (:class:`.record.Routing`) of what runs inside it.
"""
