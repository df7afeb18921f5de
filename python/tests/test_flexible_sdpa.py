"""Flexible attention: sdpa(score_mod=fn) and sdpa_backward(score_mod=fn, score_mod_bprop=fn_b), as
cudnn-frontend's Python package takes them. fn(graph, S) receives the scaled scores
S = attn_scale * Q K^T as a tensor of the graph and returns the modified scores built from graph ops;
opgraph writes the SDPA composite out of IR ops around it. Run here on the reference engine (host
buffers) against float64 numpy, outputs poisoned with NaN before each run, fresh random inputs.
The masks below are written for these tests; they use the op forms cudnn-frontend's tests use
(gen_index, comparisons declared INT32, logical modes on INT32, binary_select with a -inf scalar
given at execute)."""
import numpy as np
import pytest

import opgraph

F32 = np.float32
I32 = opgraph.data_type.INT32
BOOL = opgraph.data_type.BOOLEAN
TOL = dict(rtol=2e-5, atol=2e-5)  # float32 I/O, float64 accumulation in the reference


def graph():
    return opgraph.pygraph(io_data_type=F32, intermediate_data_type=F32, compute_data_type=F32)


def scalar(g, name, dtype=F32):
    # declared without a value: the value comes with execute (cudnn's runtime pass-by-value scalar)
    return g.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], is_pass_by_value=True, data_type=dtype)


def run(g, pack):
    g.validate()
    g.build()
    assert g.selected_engine is not None and g.selected_engine.name == "reference"
    g.execute(pack, np.empty(max(g.get_workspace_size(), 1), np.uint8))


def poisoned(t):
    return np.full(t.dims, np.nan, F32)


def softmax64(s):
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True)
    return e / z, m + np.log(z)


def lower_triangle_mask(g, s, fill):
    rows = g.gen_index(input=s, axis=2)
    rows.set_data_type(I32)
    cols = g.gen_index(input=s, axis=3)
    cols.set_data_type(I32)
    keep = g.cmp_ge(input=rows, comparison=cols, compute_data_type=BOOL)
    keep.set_data_type(BOOL)
    return g.binary_select(input0=s, input1=fill, mask=keep)


def test_score_mod_softcap_and_causal_mask_with_stats(rng):
    b, h, sq, skv, d, scale, cap = 2, 3, 7, 9, 8, 0.35, 1.7
    qn, kn, vn = (rng.standard_normal(shape).astype(F32) for shape in ((b, h, sq, d), (b, h, skv, d), (b, h, skv, d)))
    g = graph()
    q, k, v = (g.tensor_like(x, name=n) for x, n in ((qn, "q"), (kn, "k"), (vn, "v")))
    cap_t, neg_inf = scalar(g, "cap"), scalar(g, "neg_inf")
    seen = []

    def score_mod(graph_arg, s):
        seen.append((graph_arg, s.dims, s.is_virtual))
        capped = graph_arg.mul(a=graph_arg.tanh(input=graph_arg.div(a=s, b=cap_t)), b=cap_t)
        return lower_triangle_mask(graph_arg, capped, neg_inf)

    o, stats = g.sdpa(name="flex", q=q, k=k, v=v, attn_scale=scale, generate_stats=True, score_mod=score_mod)
    o.set_output(True)
    stats.set_output(True)
    assert seen == [(g, [b, h, sq, skv], True)]  # called once, with this graph and the virtual scores
    out_o, out_s = poisoned(o), poisoned(stats)
    run(g, {q: qn, k: kn, v: vn, o: out_o, stats: out_s, cap_t: np.full((1, 1, 1, 1), cap, F32),
            neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})

    s = scale * np.einsum("bhqd,bhkd->bhqk", qn.astype(np.float64), kn.astype(np.float64))
    s = cap * np.tanh(s / cap)
    s = np.where(np.arange(sq)[:, None] >= np.arange(skv)[None, :], s, -1e9)
    p, lse = softmax64(s)
    np.testing.assert_allclose(out_o, p @ vn.astype(np.float64), **TOL)
    np.testing.assert_allclose(out_s, lse, **TOL)


def band_or_edge_mask(g, s, edge, width, fill):
    # keep (row < edge) or (col < edge) or |row - col| <= width, each comparison an INT32 1 / 0
    rows = g.gen_index(input=s, axis=2)
    rows.set_data_type(I32)
    cols = g.gen_index(input=s, axis=3)
    cols.set_data_type(I32)
    near_top = g.cmp_lt(input=rows, comparison=edge, compute_data_type=BOOL)
    near_top.set_data_type(I32)
    near_left = g.cmp_lt(input=cols, comparison=edge, compute_data_type=BOOL)
    near_left.set_data_type(I32)
    diff = g.sub(a=rows, b=cols, compute_data_type=I32)
    diff.set_data_type(I32)
    above = g.cmp_ge(input=diff, comparison=g.neg(input=width), compute_data_type=BOOL)
    above.set_data_type(I32)
    below = g.cmp_le(input=diff, comparison=width, compute_data_type=BOOL)
    below.set_data_type(I32)
    band = g.logical_and(above, below, compute_data_type=BOOL)
    band.set_data_type(I32)
    keep = g.logical_or(g.logical_or(near_top, near_left, compute_data_type=BOOL), band, compute_data_type=BOOL)
    keep.set_data_type(I32)
    return g.binary_select(input0=s, input1=fill, mask=keep)


def test_score_mod_with_integer_masks(rng):
    b, h, sq, skv, d, scale, edge, width = 2, 2, 12, 12, 16, 0.25, 2, 1
    qn, kn, vn = (rng.standard_normal((b, h, n, d)).astype(F32) for n in (sq, skv, skv))
    g = graph()
    q, k, v = g.tensor_like(qn), g.tensor_like(kn), g.tensor_like(vn)
    edge_t, width_t, neg_inf = scalar(g, "edge", np.int32), scalar(g, "width", np.int32), scalar(g, "neg_inf")
    o, none = g.sdpa(q=q, k=k, v=v, attn_scale=scale, generate_stats=False,
                     score_mod=lambda gg, s: band_or_edge_mask(gg, s, edge_t, width_t, neg_inf))
    assert none is None
    o.set_output(True)
    out = poisoned(o)
    run(g, {q: qn, k: kn, v: vn, o: out, edge_t: np.full((1, 1, 1, 1), edge, np.int32),
            width_t: np.full((1, 1, 1, 1), width, np.int32), neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})

    r, c = np.arange(sq)[:, None], np.arange(skv)[None, :]
    keep = (r < edge) | (c < edge) | (np.abs(r - c) <= width)
    assert not keep.all() and keep.any()
    s = np.where(keep, scale * qn.astype(np.float64) @ kn.astype(np.float64).swapaxes(-1, -2), -1e9)
    np.testing.assert_allclose(out, softmax64(s)[0] @ vn.astype(np.float64), **TOL)


def same_document_mask(g, s, doc_of_row, doc_of_col, fill):
    # broadcast each document id over the score shape (MUL of an all-ones INT32), then compare
    cols = g.gen_index(input=s, axis=3)
    cols.set_data_type(I32)
    ones = g.cmp_le(input=cols, comparison=cols, compute_data_type=opgraph.data_type.FLOAT)
    ones.set_data_type(I32)
    rows_doc = g.scale(input=ones, scale=doc_of_row, compute_data_type=opgraph.data_type.FLOAT)
    rows_doc.set_data_type(I32)
    cols_doc = g.scale(input=ones, scale=doc_of_col, compute_data_type=opgraph.data_type.FLOAT)
    cols_doc.set_data_type(I32)
    same = g.cmp_eq(input=rows_doc, comparison=cols_doc, compute_data_type=opgraph.data_type.FLOAT)
    same.set_data_type(I32)
    return g.binary_select(input0=s, input1=fill, mask=same)


def test_score_mod_reads_other_graph_tensors(rng):
    # The callable may read any tensor of the graph: here a per-token document id (a host buffer).
    b, h, s_len, d = 1, 2, 10, 8
    qn, kn, vn = (rng.standard_normal((b, h, s_len, d)).astype(F32) for _ in range(3))
    docs = np.sort(rng.integers(0, 3, s_len)).astype(np.int32)
    g = graph()
    q, k, v = g.tensor_like(qn), g.tensor_like(kn), g.tensor_like(vn)
    doc_r = g.tensor_like(docs.reshape(1, 1, s_len, 1), name="doc_rows")
    doc_c = g.tensor_like(docs.reshape(1, 1, 1, s_len), name="doc_cols")
    neg_inf = scalar(g, "neg_inf")
    o, _ = g.sdpa(q=q, k=k, v=v, attn_scale=0.5, generate_stats=False,
                  score_mod=lambda gg, s: same_document_mask(gg, s, doc_r, doc_c, neg_inf))
    o.set_output(True)
    out = poisoned(o)
    run(g, {q: qn, k: kn, v: vn, o: out, doc_r: docs.reshape(1, 1, s_len, 1), doc_c: docs.reshape(1, 1, 1, s_len),
            neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})
    s = np.where(docs[:, None] == docs[None, :], 0.5 * qn.astype(np.float64) @ kn.astype(np.float64).swapaxes(-1, -2),
                 -1e9)
    np.testing.assert_allclose(out, softmax64(s)[0] @ vn.astype(np.float64), **TOL)


def paged(rng, b, h, s_kv, d, block):
    """Random K / V [b, h, s_kv, d] and their block containers with one shuffled page table."""
    pages = s_kv // block
    kd, vd = (rng.standard_normal((b, h, s_kv, d)).astype(F32) for _ in range(2))
    table = rng.permutation(b * pages).reshape(b, 1, pages, 1).astype(np.int32)
    kc, vc = (np.zeros((b * pages, h, block, d), F32) for _ in range(2))
    for bi in range(b):
        for p in range(pages):
            kc[table[bi, 0, p, 0]] = kd[bi, :, p * block:(p + 1) * block]
            vc[table[bi, 0, p, 0]] = vd[bi, :, p * block:(p + 1) * block]
    return kd, vd, kc, vc, table


def composite64(qn, kd, vd, scale, len_q, len_kv, score_mod):
    """cudnn-frontend's composite in float64 with its GEMM overrides: S = Q K^T with rows past
    SEQ_LEN_Q and columns past SEQ_LEN_KV holding the padding 0, * scale, score_mod(S, r, c, batch),
    softmax over every column, O = P V over the first SEQ_LEN_KV keys with rows past SEQ_LEN_Q 0."""
    b, _, sq, _ = qn.shape
    s_kv = kd.shape[2]
    r, c = np.arange(sq)[:, None], np.arange(s_kv)[None, :]
    s = qn.astype(np.float64) @ kd.astype(np.float64).swapaxes(-1, -2)
    o = np.zeros(qn.shape[:3] + (vd.shape[3],))
    stats = np.zeros(qn.shape[:3] + (1,))
    for bi in range(b):
        lq, lkv = int(len_q[bi].flat[0]), int(len_kv[bi].flat[0])
        sb = np.where((r < lq) & (c < lkv), s[bi], 0.0) * scale
        sb = score_mod(sb, r, c, bi)
        p, stats[bi] = softmax64(sb)
        o[bi, :, :lq] = p[:, :lq, :lkv] @ vd[bi, :, :lkv].astype(np.float64)
    return o, stats


def test_score_mod_with_paged_kv_and_sequence_lengths(rng):
    # Paged K/V (page tables into block containers) with per-batch lengths [b, 1, 1, 1]. As
    # cudnn-frontend's composite, the lengths are the matmuls' GEMM overrides, broadcast over the
    # heads: Q K^T takes SEQ_LEN_Q / SEQ_LEN_KV as M / N (scores past them hold the padding 0, which
    # the score_mod sees and may mask), P V as M / K (the first SEQ_LEN_KV keys, rows past SEQ_LEN_Q 0).
    b, h, sq, d, block, pages = 2, 2, 3, 8, 4, 3
    s_kv = block * pages
    kd, vd, kc, vc, table = paged(rng, b, h, s_kv, d, block)
    qn = rng.standard_normal((b, h, sq, d)).astype(F32)
    len_q = np.array([3, 2], np.int32).reshape(b, 1, 1, 1)
    len_kv = np.array([s_kv - 1, 5], np.int32).reshape(b, 1, 1, 1)

    g = graph()
    q, kct, vct = g.tensor_like(qn, name="q"), g.tensor_like(kc, name="k_cache"), g.tensor_like(vc, name="v_cache")
    tk, tv = g.tensor_like(table, name="table_k"), g.tensor_like(table, name="table_v")
    sq_t, skv_t = g.tensor_like(len_q, name="seq_q"), g.tensor_like(len_kv, name="seq_kv")
    neg_inf = scalar(g, "neg_inf")

    def rows_beyond_length(gg, s):  # a score_mod that reads SEQ_LEN_Q: rows at or past it see only key 0
        rows = gg.gen_index(input=s, axis=2)
        rows.set_data_type(I32)
        cols = gg.gen_index(input=s, axis=3)
        cols.set_data_type(I32)
        inside = gg.cmp_lt(input=rows, comparison=sq_t)
        first = gg.cmp_eq(input=cols, comparison=gg.sub(a=cols, b=cols, compute_data_type=I32))
        return gg.binary_select(input0=s, input1=neg_inf, mask=gg.logical_or(inside, first))

    o, stats = g.sdpa(q=q, k=kct, v=vct, seq_len_q=sq_t, seq_len_kv=skv_t, attn_scale=0.4, generate_stats=True,
                      paged_attention_k_table=tk, paged_attention_v_table=tv, paged_attention_max_seq_len_kv=s_kv,
                      score_mod=rows_beyond_length)
    o.set_output(True)
    stats.set_output(True)
    out_o, out_s = poisoned(o), poisoned(stats)
    run(g, {q: qn, kct: kc, vct: vc, tk: table, tv: table, sq_t: len_q, skv_t: len_kv, o: out_o, stats: out_s,
            neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})

    def mod(sb, r, c, bi):
        return np.where((r < len_q[bi, 0, 0, 0]) | (c == 0), sb, -1e9)

    want_o, want_s = composite64(qn, kd, vd, 0.4, len_q, len_kv, mod)
    assert not np.all(want_o[1, :, 2:] != 0)  # batch 1's row past SEQ_LEN_Q is the padding 0
    np.testing.assert_allclose(out_o, want_o, **TOL)
    np.testing.assert_allclose(out_s, want_s, **TOL)


def test_cudnn_frontends_flexible_graph_takes_the_lengths_as_gemm_overrides(rng):
    # test_flexible_sdpa.py::test_sdpa_with_flexible_graph of cudnn-frontend at small extents:
    # decode (s_q = 1), paged K / V in blocks of 1, HALF io, its softcap and padding-mask score_mod
    # (BINARY_SELECT of the scores where rows >= SEQ_LEN_Q AND columns >= SEQ_LEN_KV, else -1e9). The
    # graph is cudnn-frontend's: the two
    # matmuls carry the lengths as M / N and M / K overrides, no kv-length mask of opgraph's own.
    b, h, sq, s_kv, d, block, cap, scale = 3, 2, 1, 12, 16, 1, 0.8, 16 ** -0.5
    kd, vd, kc, vc, table = paged(rng, b, h, s_kv, d, block)
    kd, vd, kc, vc = (x.astype(np.float16) for x in (kd, vd, kc, vc))
    qn = rng.standard_normal((b, h, sq, d)).astype(np.float16)
    len_q = np.ones((b, 1, 1, 1), np.int32)
    len_kv = np.array([s_kv, 5, 1], np.int32).reshape(b, 1, 1, 1)
    g = opgraph.pygraph(io_data_type=np.float16, intermediate_data_type=F32, compute_data_type=F32)
    q = g.tensor(name="q", dim=[b, h, sq, d], stride=[sq * h * d, d, h * d, 1], data_type=opgraph.data_type.HALF)
    kct, vct = g.tensor_like(kc, name="container_k"), g.tensor_like(vc, name="container_v")
    tk, tv = g.tensor_like(table, name="page_table_k"), g.tensor_like(table, name="page_table_v")
    sq_t, skv_t = g.tensor_like(len_q, name="seq_len_q"), g.tensor_like(len_kv, name="seq_len_kv")
    cap_t, neg_inf = scalar(g, "softcap_scalar"), scalar(g, "neg_inf_scalar")

    def decode_mask(gg, s):
        s = gg.mul(a=gg.tanh(input=gg.div(a=s, b=cap_t)), b=cap_t)
        rows = gg.gen_index(input=s, axis=2, compute_data_type=I32)
        rows.set_data_type(I32)
        cols = gg.gen_index(input=s, axis=3, compute_data_type=I32)
        cols.set_data_type(I32)
        row_mask = gg.cmp_ge(input=rows, comparison=sq_t, compute_data_type=F32)
        row_mask.set_data_type(BOOL)
        col_mask = gg.cmp_ge(input=cols, comparison=skv_t, compute_data_type=F32)
        col_mask.set_data_type(BOOL)
        both = gg.logical_and(a=row_mask, b=col_mask, compute_data_type=F32)
        both.set_data_type(BOOL)
        return gg.binary_select(input0=s, input1=neg_inf, mask=both)

    o, none = g.sdpa(name="sdpa", q=q, k=kct, v=vct, seq_len_q=sq_t, seq_len_kv=skv_t, generate_stats=False,
                     attn_scale=scale, use_causal_mask=False, paged_attention_k_table=tk, paged_attention_v_table=tv,
                     paged_attention_max_seq_len_kv=s_kv, score_mod=decode_mask)
    assert none is None
    o.set_output(True).set_dim([b, h, sq, d]).set_stride([sq * h * d, d, h * d, 1])
    by_name = {nd.name: nd for nd in g.nodes}
    bmm1, bmm2 = by_name["sdpa::matmul_q_kt"], by_name["sdpa::matmul_p_v"]
    assert bmm1.inputs["M_override"] is sq_t and bmm1.inputs["N_override"] is skv_t
    assert bmm1.inputs.get("K_override") is None
    assert bmm2.inputs["M_override"] is sq_t and bmm2.inputs["K_override"] is skv_t
    assert bmm2.inputs.get("N_override") is None
    modes = [nd.attributes.get("mode") for nd in g.nodes if nd.op == "pointwise"]
    assert modes.count("GEN_INDEX") == 2 and modes.count("BINARY_SELECT") == 1  # the score_mod's only
    assert "CMP_LT" not in modes  # no kv-length mask of opgraph's own

    out = np.full(o.dims, np.nan, np.float16)
    run(g, {q: qn, kct: kc, vct: vc, tk: table, tv: table, sq_t: len_q, skv_t: len_kv, o: out,
            cap_t: np.full((1, 1, 1, 1), cap, F32), neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})

    def mod(sb, r, c, bi):
        sb = cap * np.tanh(sb / cap)
        # BINARY_SELECT takes input0 where the mask holds: the test's mask keeps only the scores past
        # both lengths, all others become -1e9 (none is kept at s_q = 1: every row is uniform)
        return np.where((r >= len_q[bi, 0, 0, 0]) & (c >= len_kv[bi, 0, 0, 0]), sb, -1e9)

    want, _ = composite64(qn, kd, vd, scale, len_q, len_kv, mod)
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize("with_bprop", [True, False])
def test_backward_with_score_mod_and_its_bprop(rng, with_bprop):
    b, h, sq, skv, d, scale = 2, 2, 6, 8, 8, 0.3
    qn, don = (rng.standard_normal((b, h, sq, d)).astype(F32) for _ in range(2))
    kn, vn = (rng.standard_normal((b, h, skv, d)).astype(F32) for _ in range(2))
    causal = np.arange(sq)[:, None] >= np.arange(skv)[None, :]
    s = np.where(causal, scale * qn.astype(np.float64) @ kn.astype(np.float64).swapaxes(-1, -2), -1e9)
    p, lse = softmax64(s)
    on = (p @ vn.astype(np.float64)).astype(F32)  # the forward's O and Stats, as a forward pass gives them
    stn = lse.astype(F32)

    g = graph()
    q, k, v, o, do, st = (g.tensor_like(x, name=n) for x, n in
                          ((qn, "q"), (kn, "k"), (vn, "v"), (on, "o"), (don, "dO"), (stn, "stats")))
    neg_inf, zero = scalar(g, "neg_inf"), scalar(g, "zero")
    dq, dk, dv = g.sdpa_backward(
        q=q, k=k, v=v, o=o, dO=do, stats=st, attn_scale=scale, use_causal_mask=False,
        use_deterministic_algorithm=with_bprop,  # taken either way (the composite is the deterministic form)
        score_mod=lambda gg, x: lower_triangle_mask(gg, x, neg_inf),
        score_mod_bprop=(lambda gg, x: lower_triangle_mask(gg, x, zero)) if with_bprop else None)
    for t in (dq, dk, dv):
        t.set_output(True)
    outs = [poisoned(t) for t in (dq, dk, dv)]
    run(g, {q: qn, k: kn, v: vn, o: on, do: don, st: stn, dq: outs[0], dk: outs[1], dv: outs[2],
            neg_inf: np.full((1, 1, 1, 1), -1e9, F32), zero: np.zeros((1, 1, 1, 1), F32)})

    P = np.exp(s - stn.astype(np.float64))
    dO, O, V, Q, K = (x.astype(np.float64) for x in (don, on, vn, qn, kn))
    ds = P * (dO @ V.swapaxes(-1, -2) - (dO * O).sum(-1, keepdims=True))
    if with_bprop:
        ds = np.where(causal, ds, 0.0)  # masked entries have P = 0 anyway: the bprop mask changes nothing here
    ds *= scale
    for out, ref in zip(outs, (ds @ K, ds.swapaxes(-1, -2) @ Q, P.swapaxes(-1, -2) @ dO)):
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_backward_with_sequence_lengths_takes_them_as_gemm_overrides(rng):
    # As cudnn-frontend's backward composite: Q K^T and dO V^T take SEQ_LEN_Q / SEQ_LEN_KV as M / N,
    # P^T dO and dS^T Q as M / K (SEQ_LEN_KV rows, summed over the first SEQ_LEN_Q queries), dS K
    # as M / K (SEQ_LEN_Q rows, over the first SEQ_LEN_KV keys); past them the padding 0.
    b, h, sq, skv, d, scale = 2, 2, 5, 7, 8, 0.3
    qn, don = (rng.standard_normal((b, h, sq, d)).astype(F32) for _ in range(2))
    kn, vn = (rng.standard_normal((b, h, skv, d)).astype(F32) for _ in range(2))
    on = rng.standard_normal((b, h, sq, d)).astype(F32)
    stn = (rng.standard_normal((b, h, sq, 1)) + 2.0).astype(F32)
    len_q = np.array([sq, 3], np.int32).reshape(b, 1, 1, 1)
    len_kv = np.array([4, skv], np.int32).reshape(b, 1, 1, 1)
    g = graph()
    q, k, v, o, do, st = (g.tensor_like(x, name=n) for x, n in
                          ((qn, "q"), (kn, "k"), (vn, "v"), (on, "o"), (don, "dO"), (stn, "stats")))
    sq_t, skv_t = g.tensor_like(len_q, name="seq_q"), g.tensor_like(len_kv, name="seq_kv")
    dq, dk, dv = g.sdpa_backward(q=q, k=k, v=v, o=o, dO=do, stats=st, attn_scale=scale, seq_len_q=sq_t,
                                 seq_len_kv=skv_t, score_mod=lambda gg, x: x)
    overrides = {nd.name.split("::")[-1]: {p_: t.get_name() for p_, t in nd.inputs.items() if "override" in p_}
                 for nd in g.nodes if nd.op == "matmul"}
    assert overrides == {"matmul_q_kt": {"M_override": "seq_q", "N_override": "seq_kv"},
                         "matmul_pt_do": {"M_override": "seq_kv", "K_override": "seq_q"},
                         "matmul_do_vt": {"M_override": "seq_q", "N_override": "seq_kv"},
                         "matmul_dst_q": {"M_override": "seq_kv", "K_override": "seq_q"},
                         "matmul_ds_k": {"M_override": "seq_q", "K_override": "seq_kv"}}
    for t in (dq, dk, dv):
        t.set_output(True)
    outs = [poisoned(t) for t in (dq, dk, dv)]
    run(g, {q: qn, k: kn, v: vn, o: on, do: don, st: stn, sq_t: len_q, skv_t: len_kv,
            dq: outs[0], dk: outs[1], dv: outs[2]})

    Q, K, V, O, dO, St = (x.astype(np.float64) for x in (qn, kn, vn, on, don, stn))
    want = [np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)]
    for bi in range(b):
        lq, lkv = len_q[bi, 0, 0, 0], len_kv[bi, 0, 0, 0]
        s = np.zeros((h, sq, skv))
        s[:, :lq, :lkv] = Q[bi, :, :lq] @ K[bi, :, :lkv].swapaxes(-1, -2)
        P = np.exp(scale * s - St[bi])
        dp = np.zeros((h, sq, skv))
        dp[:, :lq, :lkv] = dO[bi, :, :lq] @ V[bi, :, :lkv].swapaxes(-1, -2)
        ds = scale * (dp - (dO[bi] * O[bi]).sum(-1, keepdims=True)) * P
        want[2][bi, :, :lkv] = P[:, :lq, :lkv].swapaxes(-1, -2) @ dO[bi, :, :lq]
        want[1][bi, :, :lkv] = ds[:, :lq, :lkv].swapaxes(-1, -2) @ Q[bi, :, :lq]
        want[0][bi, :, :lq] = ds[:, :lq, :lkv] @ K[bi, :, :lkv]
    for out, ref in zip(outs, want):
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_score_mod_bprop_changes_the_gradient(rng):
    # A score_mod that doubles the scores: its bprop doubles dS (chain rule), so dQ / dK double
    # against the same graph without the bprop.
    b, h, n, d = 1, 2, 5, 4
    qn, kn, vn, don = (rng.standard_normal((b, h, n, d)).astype(F32) for _ in range(4))
    s = 2 * 0.5 * qn.astype(np.float64) @ kn.astype(np.float64).swapaxes(-1, -2)
    p, lse = softmax64(s)
    on, stn = (p @ vn.astype(np.float64)).astype(F32), lse.astype(F32)
    results = []
    for bprop in (None, lambda gg, x: gg.add(a=x, b=x)):
        g = graph()
        q, k, v, o, do, st = (g.tensor_like(x) for x in (qn, kn, vn, on, don, stn))
        dq, dk, dv = g.sdpa_backward(q=q, k=k, v=v, o=o, dO=do, stats=st, attn_scale=0.5,
                                     score_mod=lambda gg, x: gg.add(a=x, b=x), score_mod_bprop=bprop)
        outs = [poisoned(t) for t in (dq, dk, dv)]
        for t in (dq, dk, dv):
            t.set_output(True)
        run(g, {q: qn, k: kn, v: vn, o: on, do: don, st: stn, dq: outs[0], dk: outs[1], dv: outs[2]})
        results.append(outs)
    (dq0, dk0, dv0), (dq1, dk1, dv1) = results
    np.testing.assert_allclose(dq1, 2 * dq0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dk1, 2 * dk0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dv1, dv0, rtol=1e-6, atol=1e-7)
    dO, O, V, Q, K = (x.astype(np.float64) for x in (don, on, vn, qn, kn))
    ds = p * (dO @ V.swapaxes(-1, -2) - (dO * O).sum(-1, keepdims=True)) * 2 * 0.5
    np.testing.assert_allclose(dq1, ds @ K, rtol=1e-4, atol=1e-5)


def test_refusals_name_the_cause():
    g = graph()
    q, k, v = (g.tensor(dim=[1, 2, 4, 8], data_type=F32, name=n) for n in "qkv")
    with pytest.raises(TypeError, match="must return the modified score tensor"):
        g.sdpa(q=q, k=k, v=v, score_mod=lambda gg, s: None)
    with pytest.raises(TypeError, match="score_mod must be a callable"):
        g.sdpa(q=q, k=k, v=v, score_mod=3)
    with pytest.raises(NotImplementedError, match="'use_causal_mask'.*score_mod callable"):
        g.sdpa(q=q, k=k, v=v, use_causal_mask=True, score_mod=lambda gg, s: s)
    with pytest.raises(NotImplementedError, match="'dropout'"):
        g.sdpa(q=q, k=k, v=v, dropout=(0.1, g.tensor_scalar(1), g.tensor_scalar(2)), score_mod=lambda gg, s: s)
    kg = g.tensor(dim=[1, 2, 4, 8], data_type=F32, name="k2")
    q4 = g.tensor(dim=[1, 4, 4, 8], data_type=F32, name="q4")
    with pytest.raises(NotImplementedError, match="grouped query attention"):
        g.sdpa(q=q4, k=kg, v=kg, score_mod=lambda gg, s: s)
    with pytest.raises(NotImplementedError, match="sdpa_fp8"):
        g.sdpa_fp8(q=q, k=k, v=v, score_mod=lambda gg, s: s)


def test_half_io_forward_and_the_composite_s_types(rng):
    # HALF Q/K/V as cudnn-frontend's tests give them: P enters the P V matmul in the io type (cudnn's
    # composite), K^T keeps K's type; float64 reference on the HALF inputs, HALF-rounding tolerance.
    b, h, n, d = 1, 2, 16, 32
    qn, kn, vn = (rng.standard_normal((b, h, n, d)).astype(np.float16) for _ in range(3))
    g = opgraph.pygraph(io_data_type=np.float16, intermediate_data_type=F32, compute_data_type=F32)
    q, k, v = g.tensor_like(qn), g.tensor_like(kn), g.tensor_like(vn)
    neg_inf = scalar(g, "neg_inf")
    o, stats = g.sdpa(q=q, k=k, v=v, attn_scale=d ** -0.5, generate_stats=True,
                      score_mod=lambda gg, s: lower_triangle_mask(gg, s, neg_inf))
    o.set_output(True)
    stats.set_output(True)
    by_name = {nd.name: nd for nd in g.nodes}
    assert by_name["sdpa::k_transpose"].outputs["Y"].get_data_type() == opgraph.data_type.HALF
    assert by_name["sdpa::softmax"].outputs["OUT_0"].get_data_type() == opgraph.data_type.HALF
    assert o.get_data_type() == opgraph.data_type.HALF and stats.get_data_type() == opgraph.data_type.FLOAT
    out_o, out_s = np.full(o.dims, np.nan, np.float16), poisoned(stats)
    run(g, {q: qn, k: kn, v: vn, o: out_o, stats: out_s, neg_inf: np.full((1, 1, 1, 1), -1e9, F32)})
    s = d ** -0.5 * qn.astype(np.float64) @ kn.astype(np.float64).swapaxes(-1, -2)
    s = np.where(np.arange(n)[:, None] >= np.arange(n)[None, :], s, -1e9)
    p, lse = softmax64(s)
    np.testing.assert_allclose(out_o.astype(np.float64), p @ vn.astype(np.float64), rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(out_s, lse, rtol=1e-5, atol=1e-5)
