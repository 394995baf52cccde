"""QK-norm's weights follow the sizes: changing heads, d_k or the mode keeps each head's
weights where they overlap and adds neutral ones (1, or 0 for 1 + w), so the kept dimensions
compute what they did; the session still validates and computes."""

import numpy as np

from attention_explorer.engine.variants.norm_weights import refit_norm_weights
from attention_explorer.session import resize
from attention_explorer.session.compute_session import compute_session
from attention_explorer.session.starter import starter_session


def _with(data, **settings):
    config = data.config.with_changes(**settings)
    changes = refit_norm_weights(data.inputs, data.config, config)
    return data.with_changes(config=config, inputs=data.inputs.with_changes(**changes))


def test_turning_qk_norm_on_makes_neutral_weights_of_the_configs_shape():
    data = starter_session()  # 2 heads of d_k 4 (projection)
    per_head = _with(data, qk_norm="rms")
    assert np.array_equal(per_head.inputs.q_norm, np.ones(4))
    over_all = _with(data, qk_norm="rms_one_plus", qk_norm_width="all")
    assert np.array_equal(over_all.inputs.q_norm, np.zeros(2 * 4))
    compute_session(over_all)  # validates and computes


def test_heads_and_d_k_changes_keep_each_heads_weights():
    data = _with(starter_session(), qk_norm="rms", qk_norm_width="all")
    weights = np.arange(1.0, 9.0)  # [2 heads * 4]
    data = data.with_changes(inputs=data.inputs.with_changes(q_norm=weights, k_norm=weights))
    direct = resize.set_mode(data, "direct")  # QK-norm applies to typed q and k alike
    assert np.array_equal(direct.inputs.q_norm, weights)
    wider = resize.set_head_dim(direct, 6)
    assert wider.inputs.q_norm.shape == (12,)
    blocks = wider.inputs.q_norm.reshape(2, 6)
    assert np.array_equal(blocks[:, :4], weights.reshape(2, 4)) and (blocks[:, 4:] == 1).all()
    more = resize.set_heads(wider, 3)
    assert more.inputs.q_norm.shape == (18,)
    assert np.array_equal(more.inputs.q_norm[:12], wider.inputs.q_norm)
    assert (more.inputs.q_norm[12:] == 1).all()
    compute_session(more)
    per_head = _with(more, qk_norm_width="head")  # the first head's block is kept
    assert np.array_equal(per_head.inputs.q_norm, blocks[0])
