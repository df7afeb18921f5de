// sdpa reference layouts: GQA/MQA equals explicit head repetition (forward and
// backward, dK/dV summed over each group), paged K/V through page tables equals
// the dense layout, and ragged THD (packed BSHD buffers with per-batch offsets)
// equals the padded layout. The same float64 arithmetic runs on both sides, so
// the tolerance is 1e-12.
#include "sdpa_ref_fixture.h"

using namespace sdpa_ref_test;

namespace {

constexpr double kTol = 1e-12;

Array repeat_heads(const Array& a, std::int64_t h_out) {
  Array r({a.dims[0], h_out, a.dims[2], a.dims[3]});
  const std::int64_t group = h_out / a.dims[1];
  for_each_index(r.dims, [&](std::span<const std::int64_t> i) {
    r[r.offset(i)] = a.at({i[0], i[1] / group, i[2], i[3]});
  });
  return r;
}

Array sum_heads(const Array& a, std::int64_t h_out) {
  Array r({a.dims[0], h_out, a.dims[2], a.dims[3]});
  const std::int64_t group = a.dims[1] / h_out;
  for_each_index(a.dims, [&](std::span<const std::int64_t> i) {
    r.at({i[0], i[1] / group, i[2], i[3]}) += a[a.offset(i)];
  });
  return r;
}

}  // namespace

TEST(SdpaRefLayout, GqaEqualsExplicitHeadRepetition) {
  Opts gqa;
  gqa.s = {2, 4, 2, 1, 5, 6, 4, 3};
  gqa.extra = [](OpGraph&, Extras&, Attributes& a) { a.set("use_causal_mask", true); };
  Values g = run_fwd(gqa);
  Opts mha = gqa;
  mha.s.h_k = mha.s.h_v = 4;
  Values m = run_fwd(mha, {{"q", g.at("q")}, {"k", repeat_heads(g.at("k"), 4)}, {"v", repeat_heads(g.at("v"), 4)}});
  expect_near_all(g.at("o"), m.at("o"), kTol, "o");
  expect_near_all(g.at("stats"), m.at("stats"), kTol, "stats");

  // Backward: dK / dV of a shared head = sum over its query heads.
  auto bwd = [](const Opts& o, Values in) {
    OpGraph gb;
    build_bwd(gb, o);
    EXPECT_TRUE(gb.validate().is_good());
    auto r = run_reference(gb, in);
    EXPECT_TRUE(r.is_good()) << r.status().to_string();
    return r.is_good() ? *r : Values{};
  };
  Array dO = random_array(o_dims(gqa.s), 5);
  Values gb = bwd(gqa, {{"q", g.at("q")}, {"k", g.at("k")}, {"v", g.at("v")}, {"o", g.at("o")}, {"dO", dO},
                        {"stats", g.at("stats")}});
  Values mb = bwd(mha, {{"q", g.at("q")}, {"k", m.at("k")}, {"v", m.at("v")}, {"o", m.at("o")}, {"dO", dO},
                        {"stats", m.at("stats")}});
  expect_near_all(gb.at("dq"), mb.at("dq"), kTol, "dq");
  expect_near_all(gb.at("dk"), sum_heads(mb.at("dk"), 2), kTol, "dk");
  expect_near_all(gb.at("dv"), sum_heads(mb.at("dv"), 1), kTol, "dv");
}

TEST(SdpaRefLayout, PagedKvEqualsDenseLayout) {
  // b = 2, s_kv = 8 in pages of 4; 5 cache blocks (block 2 unused), tables {3, 0} and {4, 1}.
  Shape s{2, 2, 2, 2, 5, 8, 4, 3};
  auto padding = [](OpGraph& g, SdpaInputs& in, Attributes& a) {
    a.set("use_padding_mask", true).set("generate_stats", true);
    in.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    in.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
  };
  Values in{{"q", random_array(q_dims(s), 1)}, {"k", random_array(k_dims(s), 2)}, {"v", random_array(v_dims(s), 3)},
            {"sq", ints({2, 1, 1, 1}, {5, 4})}, {"skv", ints({2, 1, 1, 1}, {8, 6})}};
  OpGraph dense;
  {
    SdpaInputs x;
    Attributes a;
    padding(dense, x, a);
    auto out = dense.sdpa(dense.tensor(q_dims(s), DataType::DOUBLE, "q"), dense.tensor(k_dims(s), DataType::DOUBLE, "k"),
                          dense.tensor(v_dims(s), DataType::DOUBLE, "v"), a, x);
    out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
    out.Stats->set_output(true).set_name("stats").set_data_type(DataType::DOUBLE);
    ASSERT_TRUE(dense.validate().is_good());
  }
  const double table[2][2] = {{3, 0}, {4, 1}};
  Array kc({5, 2, 4, 4}, 0.5), vc({5, 2, 4, 3}, -0.5);  // the unused block holds junk that must not leak
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t p = 0; p < 2; ++p)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t r = 0; r < 4; ++r) {
          const auto blk = static_cast<std::int64_t>(table[n][p]);
          for (std::int64_t t = 0; t < 4; ++t) kc.at({blk, h, r, t}) = in.at("k").at({n, h, p * 4 + r, t});
          for (std::int64_t t = 0; t < 3; ++t) vc.at({blk, h, r, t}) = in.at("v").at({n, h, p * 4 + r, t});
        }
  OpGraph paged;
  {
    SdpaInputs x;
    Attributes a;
    padding(paged, x, a);
    a.set("paged_attention_max_seq_len_kv", 8);
    x.page_table_k = paged.tensor({2, 1, 2, 1}, DataType::INT32, "pt_k");
    x.page_table_v = paged.tensor({2, 1, 2, 1}, DataType::INT32, "pt_v");
    auto out = paged.sdpa(paged.tensor(q_dims(s), DataType::DOUBLE, "q"),
                          paged.tensor({5, 2, 4, 4}, DataType::DOUBLE, "k_cache"),
                          paged.tensor({5, 2, 4, 3}, DataType::DOUBLE, "v_cache"), a, x);
    out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
    out.Stats->set_output(true).set_name("stats").set_data_type(DataType::DOUBLE);
    Status st = paged.validate();
    ASSERT_TRUE(st.is_good()) << st.to_string();
  }
  auto rd = run_reference(dense, in);
  ASSERT_TRUE(rd.is_good()) << rd.status().to_string();
  Values pin{{"q", in.at("q")}, {"k_cache", kc}, {"v_cache", vc}, {"sq", in.at("sq")}, {"skv", in.at("skv")},
             {"pt_k", ints({2, 1, 2, 1}, {3, 0, 4, 1})}, {"pt_v", ints({2, 1, 2, 1}, {3, 0, 4, 1})}};
  auto rp = run_reference(paged, pin);
  ASSERT_TRUE(rp.is_good()) << rp.status().to_string();
  expect_near_all(rp->at("o"), rd->at("o"), kTol, "o");
  expect_near_all(rp->at("stats"), rd->at("stats"), kTol, "stats");
  // A page table naming a block outside the cache is refused at execution.
  pin["pt_k"] = ints({2, 1, 2, 1}, {3, 0, 9, 1});
  EXPECT_EQ(run_reference(paged, pin).status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
}

namespace {

// Packed BSHD THD buffers: token t of batch entry n, head h, element x of a
// tensor with H heads and D elements lives at off[n] + (t * H + h) * D + x. The
// declaration is [b, H, s_max, D] with strides [s_max H D, D, H D, 1], so the
// harness's logical value L of a buffer P is L[n, h, t, x] = P[n s_max H D + (t H + h) D + x].
struct Thd {
  std::int64_t b, H, s_max, W;  // W: elements per head
  D dims() const { return {b, H, s_max, W}; }
  D strides() const { return {s_max * H * W, W, H * W, 1}; }
  std::int64_t at(std::int64_t n, std::int64_t h, std::int64_t t, std::int64_t x) const {
    return n * s_max * H * W + (t * H + h) * W + x;
  }
  Array logical(const std::vector<double>& packed) const {
    Array l(dims());
    for_each_index(l.dims, [&](std::span<const std::int64_t> i) {
      l[l.offset(i)] = packed[static_cast<std::size_t>(at(i[0], i[1], i[2], i[3]))];
    });
    return l;
  }
  std::vector<double> packed(const Array& logical) const {
    std::vector<double> p(static_cast<std::size_t>(b * s_max * H * W), 0.0);
    for_each_index(logical.dims, [&](std::span<const std::int64_t> i) {
      p[static_cast<std::size_t>(at(i[0], i[1], i[2], i[3]))] = logical[logical.offset(i)];
    });
    return p;
  }
};

}  // namespace

TEST(SdpaRefLayout, RaggedThdEqualsPadded) {
  const double sq[2] = {3, 5}, skv[2] = {4, 7};
  const Thd tq{2, 2, 5, 4}, tk{2, 2, 7, 4}, tv{2, 2, 7, 3}, to{2, 2, 5, 3};
  // Offsets in elements: cumulative tokens * H * D.
  Array q_off = ints({3, 1, 1, 1}, {0, 3 * 8, 8 * 8}), k_off = ints({3, 1, 1, 1}, {0, 4 * 8, 11 * 8});
  Array v_off = ints({3, 1, 1, 1}, {0, 4 * 6, 11 * 6}), o_off = ints({3, 1, 1, 1}, {0, 3 * 6, 8 * 6});
  auto rand_packed = [](const Thd& t, std::uint64_t seed) {
    return random_array({t.b * t.s_max * t.H * t.W}, seed).v;
  };
  std::vector<double> pq = rand_packed(tq, 1), pk = rand_packed(tk, 2), pv = rand_packed(tv, 3);

  auto build = [&](OpGraph& g, bool ragged) {
    auto tensor = [&](const Thd& t, const char* name, const char* off) {
      auto x = g.tensor(t.dims(), DataType::DOUBLE, name, ragged ? t.strides() : D{});
      if (ragged) x->set_ragged_offset(g.tensor({3, 1, 1, 1}, DataType::INT32, off));
      return x;
    };
    SdpaInputs in;
    in.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    in.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
    Attributes a;
    a.set("use_padding_mask", true).set("generate_stats", true).set("use_causal_mask", true);
    auto out = g.sdpa(tensor(tq, "q", "q_off"), tensor(tk, "k", "k_off"), tensor(tv, "v", "v_off"), a, in);
    out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
    if (ragged) out.O->set_stride(to.strides()).set_ragged_offset(g.tensor({3, 1, 1, 1}, DataType::INT32, "o_off"));
    out.Stats->set_output(true).set_name("stats").set_data_type(DataType::DOUBLE);
    Status st = g.validate();
    ASSERT_TRUE(st.is_good()) << st.to_string();
  };
  // Padded values: token t of batch n read from the packed buffer at its offset.
  auto padded = [](const Thd& t, const std::vector<double>& p, const Array& off, const double* lens) {
    Array a(t.dims());
    for_each_index(a.dims, [&](std::span<const std::int64_t> i) {
      if (i[2] < lens[i[0]])
        a[a.offset(i)] = p[static_cast<std::size_t>(off[i[0]] + (i[2] * t.H + i[1]) * t.W + i[3])];
    });
    return a;
  };
  OpGraph gp, gr;
  build(gp, false);
  build(gr, true);
  Values lens_v{{"sq", ints({2, 1, 1, 1}, {sq[0], sq[1]})}, {"skv", ints({2, 1, 1, 1}, {skv[0], skv[1]})}};
  Values pin = lens_v;
  pin["q"] = padded(tq, pq, q_off, sq);
  pin["k"] = padded(tk, pk, k_off, skv);
  pin["v"] = padded(tv, pv, v_off, skv);
  Values rin = lens_v;
  rin["q"] = tq.logical(pq);
  rin["k"] = tk.logical(pk);
  rin["v"] = tv.logical(pv);
  rin["q_off"] = q_off;
  rin["k_off"] = k_off;
  rin["v_off"] = v_off;
  rin["o_off"] = o_off;
  auto rp = run_reference(gp, pin);
  auto rr = run_reference(gr, rin);
  ASSERT_TRUE(rp.is_good()) << rp.status().to_string();
  ASSERT_TRUE(rr.is_good()) << rr.status().to_string();
  // The ragged O buffer, unpacked at o_off, equals the padded O on valid tokens.
  std::vector<double> po = to.packed(rr->at("o"));
  const Array& op = rp->at("o");
  int checked = 0;
  for_each_index(op.dims, [&](std::span<const std::int64_t> i) {
    if (i[2] >= sq[i[0]]) return;
    const double got = po[static_cast<std::size_t>(o_off[i[0]] + (i[2] * to.H + i[1]) * to.W + i[3])];
    EXPECT_NEAR(got, op[op.offset(i)], kTol) << index_str(op.dims, op.offset(i));
    ++checked;
  });
  EXPECT_EQ(checked, 8 * 2 * 3);
  expect_near_all(rr->at("stats"), rp->at("stats"), kTol, "stats");
}

namespace {

// The padded [b, H, s_max, W] value of packed buffer `p` with per-batch element offsets `off`.
Array unpack_padded(const Thd& t, const std::vector<double>& p, const Array& off, const double* lens) {
  Array a(t.dims());
  for_each_index(a.dims, [&](std::span<const std::int64_t> i) {
    if (i[2] < lens[i[0]]) a[a.offset(i)] = p[static_cast<std::size_t>(off[i[0]] + (i[2] * t.H + i[1]) * t.W + i[3])];
  });
  return a;
}

}  // namespace

TEST(SdpaRefLayout, RaggedThdBackwardEqualsPadded) {
  const double sq[2] = {4, 2}, skv[2] = {3, 6};
  const Thd tq{2, 2, 4, 4}, tk{2, 2, 6, 4}, tv{2, 2, 6, 3}, to{2, 2, 4, 3};
  const Array q_off = ints({3, 1, 1, 1}, {0, 4 * 8, 6 * 8}), k_off = ints({3, 1, 1, 1}, {0, 3 * 8, 9 * 8});
  const Array v_off = ints({3, 1, 1, 1}, {0, 3 * 6, 9 * 6}), o_off = ints({3, 1, 1, 1}, {0, 4 * 6, 6 * 6});
  auto packed = [](const Thd& t, std::uint64_t seed) { return random_array({t.b * t.s_max * t.H * t.W}, seed).v; };
  const auto pq = packed(tq, 1), pk = packed(tk, 2), pv = packed(tv, 3), po = packed(to, 4), pdo = packed(to, 5);
  struct Port {
    const char* name;
    const Thd* t;
    const std::vector<double>* p;
    const Array* off;
    const double* lens;
  };
  const Port ports[] = {{"q", &tq, &pq, &q_off, sq}, {"k", &tk, &pk, &k_off, skv}, {"v", &tv, &pv, &v_off, skv},
                        {"o", &to, &po, &o_off, sq},  {"dO", &to, &pdo, &o_off, sq}};
  auto build = [&](OpGraph& g, bool ragged) {
    std::map<std::string, TensorPtr> t;
    for (const Port& p : ports) {
      t[p.name] = g.tensor(p.t->dims(), DataType::DOUBLE, p.name, ragged ? p.t->strides() : D{});
      if (ragged) t[p.name]->set_ragged_offset(g.tensor({3, 1, 1, 1}, DataType::INT32, std::string(p.name) + "_off"));
    }
    SdpaBackwardInputs in;
    in.seq_len_q = g.tensor({2, 1, 1, 1}, DataType::INT32, "sq");
    in.seq_len_kv = g.tensor({2, 1, 1, 1}, DataType::INT32, "skv");
    auto r = g.sdpa_backward(t["q"], t["k"], t["v"], t["o"], t["dO"], g.tensor({2, 2, 4, 1}, DataType::DOUBLE, "stats"),
                             Attributes().set("use_padding_mask", true).set("use_causal_mask_bottom_right", true), in);
    const std::pair<TensorPtr, const Port*> outs[] = {{r.dQ, &ports[0]}, {r.dK, &ports[1]}, {r.dV, &ports[2]}};
    for (auto [x, p] : outs) {
      x->set_output(true).set_name(std::string("d") + p->name).set_data_type(DataType::DOUBLE);
      if (ragged) x->set_stride(p->t->strides()).set_ragged_offset(g.tensor({3, 1, 1, 1}, DataType::INT32,
                                                                            std::string("d") + p->name + "_off"));
    }
    Status st = g.validate();
    ASSERT_TRUE(st.is_good()) << st.to_string();
  };
  OpGraph gp, gr;
  build(gp, false);
  build(gr, true);
  Array stats = random_array({2, 2, 4, 1}, 6, 0.5, 2.0);  // any finite Stats: both sides read the same
  Values pin{{"sq", ints({2, 1, 1, 1}, {sq[0], sq[1]})}, {"skv", ints({2, 1, 1, 1}, {skv[0], skv[1]})},
             {"stats", stats}};
  Values rin = pin;
  for (const Port& p : ports) {
    pin[p.name] = unpack_padded(*p.t, *p.p, *p.off, p.lens);
    rin[p.name] = p.t->logical(*p.p);
    rin[std::string(p.name) + "_off"] = *p.off;
  }
  for (int i = 0; i < 3; ++i) rin[std::string("d") + ports[i].name + "_off"] = *ports[i].off;
  auto rp = run_reference(gp, pin);
  auto rr = run_reference(gr, rin);
  ASSERT_TRUE(rp.is_good()) << rp.status().to_string();
  ASSERT_TRUE(rr.is_good()) << rr.status().to_string();
  for (int i = 0; i < 3; ++i) {
    const Port& p = ports[i];
    const std::string name = std::string("d") + p.name;
    Array got = unpack_padded(*p.t, p.t->packed(rr->at(name)), *p.off, p.lens);
    expect_near_all(got, rp->at(name), kTol, name.c_str());
    EXPECT_GT(max_abs(got), 1e-3) << name;
  }
}

TEST(SdpaRefLayout, RaggedOffsetOutsideTheDeclarationIsRefused) {
  const Thd tq{1, 1, 2, 2};
  OpGraph g;
  auto q = g.tensor(tq.dims(), DataType::DOUBLE, "q", tq.strides());
  q->set_ragged_offset(g.tensor({2, 1, 1, 1}, DataType::INT32, "q_off"));
  SdpaInputs in;
  in.seq_len_q = g.tensor({1, 1, 1, 1}, DataType::INT32, "sq");
  in.seq_len_kv = g.tensor({1, 1, 1, 1}, DataType::INT32, "skv");
  auto out = g.sdpa(q, g.tensor({1, 1, 2, 2}, DataType::DOUBLE, "k"), g.tensor({1, 1, 2, 2}, DataType::DOUBLE, "v"),
                    Attributes().set("use_padding_mask", true), in);
  out.O->set_output(true).set_name("o").set_data_type(DataType::DOUBLE);
  ASSERT_TRUE(g.validate().is_good());
  Values v{{"q", random_array(tq.dims(), 1)}, {"k", random_array({1, 1, 2, 2}, 2)}, {"v", random_array({1, 1, 2, 2}, 3)},
           {"sq", ints({1, 1, 1, 1}, {2})}, {"skv", ints({1, 1, 1, 1}, {2})}, {"q_off", ints({2, 1, 1, 1}, {2, 4})}};
  auto r = run_reference(g, v);
  ASSERT_EQ(r.status().code(), ErrorCode::GRAPH_EXECUTION_FAILED);
  EXPECT_NE(r.status().message().find("ragged_within_declaration"), std::string::npos) << r.status().message();
}
