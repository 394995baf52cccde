"""A torch device nothing can compute on (meta, a typo) is refused by the one backend parser,
in one line naming it, before any tensor is made (issue 32 item 8: torch:meta raised a
RuntimeError about pin_memory)."""

import pytest

from attention_explorer.engine.backend import resolve_backend
from attention_explorer.engine.engine_errors import AttentionInputError

pytest.importorskip("torch")


@pytest.mark.parametrize("spec", ["torch:meta", "torch:xpu", "torch:cuda0", "torch:gpu"])
def test_devices_torch_cannot_compute_on_are_refused_by_name(spec):
    with pytest.raises(AttentionInputError, match="is not a device torch can compute on"):
        resolve_backend(spec)


@pytest.mark.parametrize(
    ("spec", "device"), [("torch:cpu", "cpu"), ("torch:cuda", "cuda:0"), ("torch:cuda:1", "cuda:1")]
)
def test_real_devices_are_spelled_as_torch_spells_them(spec, device):
    assert resolve_backend(spec).device == device


def test_the_api_refuses_meta_in_one_line():
    import attention_explorer as ae

    with pytest.raises(AttentionInputError, match="'meta'"):
        ae.compute(ae.example("starter"), backend="torch:meta")
