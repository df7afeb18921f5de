"""cudnn-frontend's SDPA support rules that its tests waive on at validate(): ALiBi is supported
only with diagonal_band_right_bound = 0 (a causal band; use_causal_mask and
use_causal_mask_bottom_right set it), forward and backward alike. test_mhas's
test_sdpa[...alibi1-...-right_bound0-...] is skipped so with the real package; opgraph planned it and
failed where cuDNN could not compile the drawn shape's kernel."""
import pytest

import opgraph

BF16 = opgraph.data_type.BFLOAT16


def alibi_graph(backward=False, **band):
    g = opgraph.pygraph(io_data_type=BF16, intermediate_data_type=opgraph.data_type.FLOAT,
                        compute_data_type=opgraph.data_type.FLOAT, sm_version=90, sm_count=132)
    q, k, v = (g.tensor(name=n, dim=[2, 6, 64, 64], data_type=BF16) for n in "QKV")
    if backward:
        o = g.tensor(name="O", dim=[2, 6, 64, 64], data_type=BF16)
        do = g.tensor(name="dO", dim=[2, 6, 64, 64], data_type=BF16)
        st = g.tensor(name="Stats", dim=[2, 6, 64, 1], data_type=opgraph.data_type.FLOAT)
        for t in g.sdpa_backward(q=q, k=k, v=v, o=o, dO=do, stats=st, use_alibi_mask=True, name="attn_bwd",
                                 **band):
            t.set_output(True).set_data_type(BF16)
    else:
        o, _ = g.sdpa(q=q, k=k, v=v, use_alibi_mask=True, generate_stats=False, name="attn", **band)
        o.set_output(True).set_data_type(BF16)
    return g


@pytest.mark.parametrize("backward", [False, True])
def test_alibi_without_a_right_bound_of_zero_is_not_supported_at_validate(backward):
    for band in ({}, {"diagonal_band_right_bound": 4}):
        g = alibi_graph(backward, **band)
        with pytest.raises(opgraph.cudnnGraphNotSupportedError,
                           match=r"op 'sdpa(_backward)?' \(node 'attn(_bwd)?'\).*use_alibi_mask.*right_bound"):
            g.validate()


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("band", [{"diagonal_band_right_bound": 0}, {"use_causal_mask": True},
                                  {"use_causal_mask_bottom_right": True}, {"right_bound": 0}])
def test_alibi_with_a_right_bound_of_zero_validates(backward, band):
    alibi_graph(backward, **band).validate()
