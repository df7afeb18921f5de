// engines/gemm/gemm_problem.cpp — analyze_gemm: the family's acceptance rules
// (G1..G7 in gemm_problem.h) and the reduction of a graph to a GemmProblem.
#include "engines/gemm/gemm_problem.h"

#include <algorithm>
#include <set>

#include "opgraph/op_graph.h"
#include "opgraph/ops.h"
#include "opgraph/variant_pack.h"

namespace opgraph::gemm {
namespace {

Status decline(const std::string& rule, const std::string& why) {
  return {ErrorCode::GRAPH_NOT_SUPPORTED, "engine family gemm: rule " + rule + ": " + why};
}

std::string tname(const Tensor& t) { return "tensor '" + t.get_name() + "' (uid " + std::to_string(t.get_uid()) + ")"; }

std::int64_t elem_bytes(DataType d) { return d == DataType::FLOAT ? 4 : 2; }

bool is_16bit_in(DataType d) { return d == DataType::BFLOAT16 || d == DataType::HALF; }
bool is_out_type(DataType d) { return is_16bit_in(d) || d == DataType::FLOAT; }

// A tensor's extents and strides as analysed: the declaration's, or a per-call
// override's (the normalised pack's slot; gemm's types have one element per slot).
struct Geom {
  std::vector<std::int64_t> dim, stride;
  const std::vector<std::int64_t>& get_dim() const { return dim; }
  const std::vector<std::int64_t>& get_stride() const { return stride; }
};

Geom geom_of(const Tensor& t, const VariantPack* pack) {
  if (pack) {
    const OperandBuffer* b = pack->find(t.get_uid());
    if (b && b->overridden) {
      const auto d = b->dim(), st = b->stride();
      return Geom{{d.begin(), d.end()}, {st.begin(), st.end()}};
    }
  }
  Geom g{t.get_dim(), t.get_stride()};
  if (g.stride.size() != g.dim.size()) {
    g.stride.assign(g.dim.size(), 1);
    for (std::size_t i = g.dim.size(); i-- > 1;) g.stride[i - 1] = g.stride[i] * std::max<std::int64_t>(g.dim[i], 1);
  }
  return g;
}

// Stride of output axis `i` (of `out_rank`) for a tensor aligned right against
// it; 0 for a missing or broadcast axis.
std::int64_t aligned_stride(const Geom& t, std::size_t out_rank, std::size_t i) {
  const std::size_t r = t.get_dim().size();
  if (i + r < out_rank) return 0;
  const std::size_t j = i + r - out_rank;
  return t.get_dim()[j] == 1 ? 0 : t.get_stride()[j];
}

// Batch stride of output batch axis `i` (of `out_batch`) for A or B (batch part = rank - 2).
std::int64_t batch_stride(const Geom& t, std::size_t out_batch, std::size_t i) {
  const std::size_t tb = t.get_dim().size() - 2;
  if (i + tb < out_batch) return 0;
  const std::size_t j = i + tb - out_batch;
  return t.get_dim()[j] == 1 ? 0 : t.get_stride()[j];
}

Status check_alignment(const Tensor& t) {
  const std::int64_t a = t.get_alignment();
  if (t.get_is_pass_by_value()) return Status::ok();
  if (a <= 0 || (a & (a - 1)) != 0 || a < elem_bytes(t.get_data_type()))
    return decline("G7", tname(t) + " declares alignment " + std::to_string(a) +
                             " bytes; a power of two of at least the element size is required");
  return Status::ok();
}

struct ChainWalk {
  const OpGraph& g;
  std::vector<const Node*> consumers(const Tensor* t) const {
    std::vector<const Node*> out;
    for (const auto& n : g.nodes())
      for (const auto& port : n->inputs())
        for (const auto& x : port)
          if (x.get() == t) out.push_back(n.get());
    return out;
  }
};

Result<EpiKind> kind_of(const Node& n) {
  using P = ops::Pointwise;
  using M = ops::PointwiseMode;
  const std::optional<M> mode = P::mode(n);  // required: validate() refuses a node without it
  if (!mode) return decline("G3", "node '" + n.name() + "' has no pointwise mode");
  switch (*mode) {
    case M::ADD: return EpiKind::ADD;
    case M::MUL: return EpiKind::MUL;
    case M::RELU_FWD:
      if (P::relu_upper_clip(n) || P::relu_lower_clip(n) != 0.0 || P::relu_lower_clip_slope(n) != 0.0)
        return decline("G3", "node '" + n.name() + "' is RELU_FWD with clips or a slope; only plain relu is fused");
      return EpiKind::RELU;
    case M::GELU_FWD: return EpiKind::GELU;
    case M::GELU_APPROX_TANH_FWD: return EpiKind::GELU_TANH;
    case M::SWISH_FWD: return EpiKind::SWISH;
    case M::SIGMOID_FWD: return EpiKind::SIGMOID;
    case M::TANH_FWD: return EpiKind::TANH;
    case M::IDENTITY: return EpiKind::IDENTITY;
    default: break;
  }
  return decline("G3", "node '" + n.name() + "' has pointwise mode " + std::string(ops::to_string(*mode)) +
                           ", which the epilogue does not fuse");
}

}  // namespace

std::string_view to_string(EpiKind k) noexcept {
  switch (k) {
    case EpiKind::ADD: return "add";
    case EpiKind::MUL: return "mul";
    case EpiKind::RELU: return "relu";
    case EpiKind::GELU: return "gelu";
    case EpiKind::GELU_TANH: return "gelu_tanh";
    case EpiKind::SWISH: return "swish";
    case EpiKind::SIGMOID: return "sigmoid";
    case EpiKind::TANH: return "tanh";
    case EpiKind::IDENTITY: return "identity";
  }
  return "?";
}

Result<GemmProblem> analyze_gemm(const OpGraph& g) { return analyze_gemm(g, nullptr); }

Result<GemmProblem> analyze_gemm(const OpGraph& g, const VariantPack* pack) {
  // G1
  const Node* mm = nullptr;
  for (const auto& n : g.nodes()) {
    if (op_index(n->spec()) == ops::Matmul::kIndex) {
      if (mm) return decline("G1", "graph has two matmuls ('" + mm->name() + "', '" + n->name() + "')");
      mm = n.get();
    } else if (op_index(n->spec()) != ops::Pointwise::kIndex) {
      return decline("G1", "node '" + n->name() + "' is op '" + std::string(n->op()) + "'; only pointwise nodes follow the matmul");
    }
  }
  if (!mm) return decline("G1", "graph has no matmul");
  using MmIn = ops::Matmul::In;
  for (MmIn p : {MmIn::M_override, MmIn::N_override, MmIn::K_override})
    if (mm->input(p))
      return decline("G1", "matmul '" + mm->name() + "' binds " + std::string(ops::name(p)) + "; overrides are not fused");
  const TensorPtr A = mm->input(MmIn::A), B = mm->input(MmIn::B);
  TensorPtr cur = mm->output(ops::Matmul::Out::C);
  if (!A || !B || !cur)  // validate() refuses such a graph; a declaration is never dereferenced unbound
    return decline("G1", "matmul '" + mm->name() + "' does not bind all of A, B and C");

  GemmProblem p;
  // G2/G3: walk the chain.
  ChainWalk walk{g};
  std::size_t visited = 1;
  while (true) {
    auto users = walk.consumers(cur.get());
    if (users.empty()) break;
    if (users.size() > 1 || !cur->get_is_virtual())
      return decline("G2", tname(*cur) + " is read by " + std::to_string(users.size()) + " node(s)" +
                               (cur->get_is_virtual() ? "" : " and is a graph output") + "; the epilogue is one chain");
    const Node& n = *users.front();
    auto kind_or = kind_of(n);
    if (kind_or.is_bad()) return kind_or.status();
    const EpiKind kind = *kind_or;
    EpiStep step{kind, n.name(), -1, ops::Pointwise::swish_beta(n)};
    TensorPtr in0 = n.input(ops::Pointwise::In::IN_0), in1 = n.input(ops::Pointwise::In::IN_1);
    if (kind == EpiKind::ADD || kind == EpiKind::MUL) {
      if (in0 == cur && in1 == cur)
        return decline("G2", "node '" + n.name() + "' reads the chain value twice");
      TensorPtr other = in0 == cur ? in1 : in0;
      if (g.producer_of(other.get()))
        return decline("G2", "node '" + n.name() + "' reads " + tname(*other) + ", which another node computes");
      if (static_cast<int>(p.operands.size()) >= kMaxEpilogueOperands)
        return decline("G3", "node '" + n.name() + "' needs a 5th epilogue operand; at most 4 are fused");
      EpiOperand op;
      if (other->get_is_pass_by_value()) {
        op.by_value = true;
        op.value = other->get_pass_by_value()->as_double();
      } else {
        op.view.uid = other->get_uid();
        op.view.dtype = other->get_data_type();
      }
      step.operand = static_cast<int>(p.operands.size());
      p.operands.push_back(op);
    }
    p.steps.push_back(step);
    cur = n.output(ops::Pointwise::Out::OUT_0);
    if (!cur) return decline("G2", "node '" + n.name() + "' binds no output");
    ++visited;
  }
  if (visited != g.nodes().size())
    return decline("G2", "graph has " + std::to_string(g.nodes().size() - visited) +
                             " pointwise node(s) off the chain that starts at the matmul's output");
  if (cur->get_is_virtual()) return decline("G2", tname(*cur) + " ends the chain but is virtual");
  const Tensor& C = *cur;
  const Geom ga = geom_of(*A, pack), gb = geom_of(*B, pack), gc = geom_of(C, pack);

  // G4
  if (!is_16bit_in(A->get_data_type()) || A->get_data_type() != B->get_data_type())
    return decline("G4", "A is " + std::string(opgraph::to_string(A->get_data_type())) + " and B is " +
                             std::string(opgraph::to_string(B->get_data_type())) + "; both BFLOAT16 or both HALF");
  if (!is_out_type(C.get_data_type()))
    return decline("G4", tname(C) + " is " + std::string(opgraph::to_string(C.get_data_type())) +
                             "; the output is BFLOAT16, HALF or FLOAT");
  p.in = A->get_data_type();
  p.out = C.get_data_type();

  // Extents.
  const auto& cd = gc.get_dim();
  const std::size_t R = cd.size();
  p.m = cd[R - 2];
  p.n = cd[R - 1];
  p.k = ga.get_dim().back();
  if (pack) {
    // G9: the extents of A, B and C agree (validate() proved it for the
    // declaration; per-call overrides must override every operand an axis spans).
    const auto& ad = ga.get_dim();
    const auto& bd = gb.get_dim();
    const std::size_t ra = ad.size(), rb = bd.size();
    auto bad = [&](const std::string& what) {
      return Status(ErrorCode::INVALID_VARIANT_PACK,
                    "engine family gemm: rule G9: per-call extents disagree: " + what +
                        " (A " + tname(*A) + ", B " + tname(*B) + ", C " + tname(C) +
                        "); override every operand that carries the axis");
    };
    if (ad[ra - 2] != p.m) return bad("A's M is " + std::to_string(ad[ra - 2]) + ", C's is " + std::to_string(p.m));
    if (bd[rb - 2] != p.k) return bad("A's K is " + std::to_string(p.k) + ", B's is " + std::to_string(bd[rb - 2]));
    if (bd[rb - 1] != p.n) return bad("B's N is " + std::to_string(bd[rb - 1]) + ", C's is " + std::to_string(p.n));
    for (const Geom* x : {&ga, &gb}) {
      const auto& xd = x->get_dim();
      for (std::size_t j = 0; j + 2 < xd.size(); ++j) {
        const std::size_t i = j + R - xd.size();
        if (i + 2 >= R || (xd[j] != 1 && xd[j] != cd[i]))
          return bad(std::string(x == &ga ? "A" : "B") + "'s batch axis " + std::to_string(j) + " is " +
                     std::to_string(xd[j]) + " against C's " + (i + 2 < R ? std::to_string(cd[i]) : "none"));
      }
    }
  }

  // G5: layouts.
  const auto& as = ga.get_stride();
  const auto& bs = gb.get_stride();
  const std::size_t ra = as.size(), rb = bs.size();
  // A unit stride decides; an extent-1 axis (any stride) is contiguous too.
  if (as[ra - 1] == 1) p.a_kmajor = true;
  else if (as[ra - 2] == 1) p.a_kmajor = false;
  else if (p.k == 1 || p.m == 1) p.a_kmajor = p.k == 1;
  else return decline("G5", tname(*A) + " has neither its K nor its M axis contiguous");
  if (bs[rb - 1] == 1) p.b_kmajor = false;
  else if (bs[rb - 2] == 1) p.b_kmajor = true;
  else if (p.k == 1 || p.n == 1) p.b_kmajor = p.k == 1;
  else return decline("G5", tname(*B) + " has neither its N nor its K axis contiguous");
  if (gc.get_stride()[R - 1] != 1 && p.n != 1)
    return decline("G5", tname(C) + " must have its N axis contiguous (stride 1)");
  p.a = {A->get_uid(), p.in, 0, 0, as[ra - 2], as[ra - 1]};
  p.b = {B->get_uid(), p.in, 0, 0, bs[rb - 2], bs[rb - 1]};
  p.c = {C.get_uid(), p.out, 0, 0, gc.get_stride()[R - 2], gc.get_stride()[R - 1]};
  if (p.a_kmajor) p.a.sc = 1;
  else p.a.sr = 1;
  if (p.b_kmajor) p.b.sr = 1;
  else p.b.sc = 1;
  p.c.sc = 1;

  // G6: batch axes of extent > 1.
  std::vector<std::size_t> bax;
  for (std::size_t i = 0; i + 2 < R; ++i)
    if (cd[i] > 1) bax.push_back(i);
  if (bax.size() > 2) return decline("G6", tname(C) + " has " + std::to_string(bax.size()) + " batch axes of extent > 1; at most 2");
  auto set_batch = [&](View& v, auto stride_of) {
    if (bax.size() == 2) {
      v.s0 = stride_of(bax[0]);
      v.s1 = stride_of(bax[1]);
    } else if (bax.size() == 1) {
      v.s1 = stride_of(bax[0]);
    }
  };
  if (bax.size() == 2) {
    p.batch0 = cd[bax[0]];
    p.batch1 = cd[bax[1]];
  } else if (bax.size() == 1) {
    p.batch1 = cd[bax[0]];
  }
  if (p.batch0 * p.batch1 > 65535) return decline("G6", "batch " + std::to_string(p.batch0 * p.batch1) + " exceeds 65535");
  set_batch(p.a, [&](std::size_t i) { return batch_stride(ga, R - 2, i); });
  set_batch(p.b, [&](std::size_t i) { return batch_stride(gb, R - 2, i); });
  set_batch(p.c, [&](std::size_t i) { return gc.get_stride()[i]; });

  // G4/G5 for epilogue operands.
  for (auto& op : p.operands) {
    if (op.by_value) continue;
    TensorPtr t = g.tensor_by_uid(op.view.uid);
    if (!is_out_type(t->get_data_type()))
      return decline("G4", tname(*t) + " is " + std::string(opgraph::to_string(t->get_data_type())) +
                               "; epilogue operands are BFLOAT16, HALF or FLOAT");
    const Geom gt = geom_of(*t, pack);
    const auto& td = gt.get_dim();
    if (td.size() > R) return decline("G5", tname(*t) + " has a higher rank than the output");
    for (std::size_t j = 0; j < td.size(); ++j) {
      const std::size_t i = j + R - td.size();
      if (td[j] != 1 && td[j] != cd[i])
        return decline("G5", tname(*t) + " does not broadcast to the output " + tname(C));
    }
    set_batch(op.view, [&](std::size_t i) { return aligned_stride(gt, R, i); });
    op.view.sr = aligned_stride(gt, R, R - 2);
    op.view.sc = aligned_stride(gt, R, R - 1);
    OPGRAPH_CHECK(check_alignment(*t));
  }

  // G7: alignment facts.
  OPGRAPH_CHECK(check_alignment(*A));
  OPGRAPH_CHECK(check_alignment(*B));
  OPGRAPH_CHECK(check_alignment(C));
  auto vec_ok = [](const Tensor& t, const View& v, std::int64_t contig_extent, bool contig_is_c) {
    if (t.get_alignment() < 16 || contig_extent % 8) return false;
    for (std::int64_t s : {v.s0, v.s1, contig_is_c ? v.sr : v.sc})
      if (s % 8) return false;
    return true;
  };
  const bool va = vec_ok(*A, p.a, p.a_kmajor ? p.k : p.m, p.a_kmajor);
  const bool vb = vec_ok(*B, p.b, p.b_kmajor ? p.k : p.n, !p.b_kmajor);
  p.vec = va && vb ? 8 : 1;
  return p;
}

}  // namespace opgraph::gemm
