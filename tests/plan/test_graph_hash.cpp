// tests/plan/test_graph_hash.cpp — the graph key and the layout class are hashes
// streamed from the graph (ir/graph_hash.h) that must mean what their texts mean:
// on many random graphs, same canonical JSON <=> same OpGraph::key(), and same
// layout_class_text <=> same 128-bit class key (the plan cache's) and same
// layout_class_key; plus the edge cases docs/autotune.md lists.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "api/plan_cache.h"
#include "opgraph/graph.h"

namespace opgraph {
namespace {

using graph_hash::Hash128;

// A random graph's recipe: C = act(A[b,m,k] @ B[b,k,n] (+ bias)) (* scale).
struct Recipe {
  std::string name = "g";
  DataType io = DataType::FLOAT;
  std::int64_t b = 1, m = 4, k = 8, n = 4;
  int a_layout = 0, b_layout = 0;  // 0 row-major, 1 column-major, 2 padded, 3 odd stride on the batch axis
  int bias = 0;                     // 0 none, 1 [1,1,n], 2 [b,m,n], 3 [1,1,n] broadcast by stride 0 on a [1,m,n]
  int act = 0;                      // 0 none, 1 relu(lower clip as int), 2 relu(lower clip as double), 3 leaky
  double clip = 0;
  int scale = 0;                    // 0 none, 1 a by-value scalar
  double scale_value = 2;
  std::string a_name = "A";
};

std::vector<std::int64_t> strides_for(int layout, std::int64_t b, std::int64_t r, std::int64_t c) {
  switch (layout) {
    case 1: return {r * c, 1, r};           // column-major rows/columns
    case 2: return {r * (c + 3), c + 3, 1};  // a padded row: not packed
    case 3: return {777, c, 1};             // the batch axis's stride only matters when b > 1
    default: return {r * c, c, 1};
  }
  (void)b;
}

void build(OpGraph& g, const Recipe& r) {
  g.set_name(r.name).set_io_data_type(r.io).set_compute_data_type(DataType::FLOAT);
  g.set_intermediate_data_type(DataType::FLOAT);
  auto a = g.tensor({r.b, r.m, r.k}, r.io, r.a_name, strides_for(r.a_layout, r.b, r.m, r.k));
  auto bb = g.tensor({r.b, r.k, r.n}, r.io, "B", strides_for(r.b_layout, r.b, r.k, r.n));
  auto y = g.matmul(a, bb);
  if (r.bias == 1) y = g.add(y, g.tensor({1, 1, r.n}, r.io, "bias"));
  if (r.bias == 2) y = g.add(y, g.tensor({r.b, r.m, r.n}, r.io, "bias"));
  if (r.bias == 3) y = g.add(y, g.tensor({1, r.m, r.n}, r.io, "bias", {r.n, 0, 1}));
  if (r.act == 1) y = g.relu(y, Attributes().set("relu_lower_clip", static_cast<std::int64_t>(r.clip)));
  if (r.act == 2) y = g.relu(y, Attributes().set("relu_lower_clip", r.clip));
  if (r.act == 3) y = g.leaky_relu(y, r.clip);
  if (r.scale) y = g.mul(y, g.tensor_scalar(r.scale_value));
  y->set_output(true).set_name("C");
}

Recipe random_recipe(std::mt19937_64& rng) {
  auto pick = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
  const std::int64_t extents[] = {1, 1, 2, 3, 4, 8, 16};
  Recipe r;
  r.name = pick(4) ? "g" : "h";
  r.io = pick(3) ? DataType::FLOAT : DataType::HALF;
  r.b = extents[pick(7)];
  r.m = extents[pick(7)];
  r.k = extents[pick(7)];
  r.n = extents[pick(7)];
  r.a_layout = static_cast<int>(pick(4));
  r.b_layout = static_cast<int>(pick(4));
  r.bias = static_cast<int>(pick(4));
  r.act = static_cast<int>(pick(4));
  r.clip = pick(2) ? 0.0 : 1.0;
  r.scale = static_cast<int>(pick(2));
  const double values[] = {2.0, 0.5, -0.0, 0.0, std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN()};
  r.scale_value = values[pick(6)];
  r.a_name = pick(5) ? "A" : "\"dim\":[7,7],\"stride\":[1,1]";
  return r;
}

// Another recipe near `r`: often the same class (only extents above 1 redrawn), often not.
Recipe neighbour(const Recipe& r, std::mt19937_64& rng) {
  Recipe s = r;
  auto pick = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
  const std::int64_t big[] = {2, 3, 4, 8, 16, 32};
  for (std::int64_t* e : {&s.b, &s.m, &s.k, &s.n})
    if (*e != 1 && pick(2)) *e = big[pick(6)];
  switch (pick(8)) {
    case 0: s.a_layout = static_cast<int>(pick(4)); break;
    case 1: s.b = s.b == 1 ? 2 : 1; break;
    case 2: s.act = static_cast<int>(pick(4)); break;
    case 3: s.scale_value = pick(2) ? -0.0 : std::numeric_limits<double>::quiet_NaN(); break;
    case 4: s.name = s.name == "g" ? "h" : "g"; break;
    default: break;  // extents only
  }
  return s;
}

struct Seen {
  std::string text, json;
  Hash128 cls;
  std::uint64_t cls64 = 0, key = 0;
};

std::optional<Seen> observe(const Recipe& r) {
  Graph g;
  build(g, r);
  if (g.validate().is_bad()) return std::nullopt;
  Seen s;
  s.text = plan_cache::layout_class_text(g).value();
  s.json = g.serialize().value();
  s.cls = plan_cache::layout_class128(g).value();
  s.cls64 = layout_class_key(g).value();
  s.key = g.key().value();
  // The key of the graph read back from its JSON is the same (the round trip is the identity).
  auto back = Graph::deserialize(s.json);
  EXPECT_TRUE(back.is_good());
  if (back.is_good()) {
    EXPECT_EQ(back->key().value(), s.key) << s.json;
    EXPECT_EQ(plan_cache::layout_class128(*back).value(), s.cls) << s.json;
  }
  return s;
}

TEST(GraphHash, OnRandomGraphsTheKeysAgreeWithTheirTexts) {
  std::mt19937_64 rng(20261202);
  std::map<std::string, Hash128> cls_of_text;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> text_of_cls;
  std::map<std::string, std::uint64_t> key_of_json;
  std::map<std::uint64_t, std::string> json_of_key;
  int pairs = 0, same_class = 0, other_class = 0, same_json = 0;
  for (int i = 0; i < 400; ++i) {
    const Recipe r = random_recipe(rng);
    const Recipe s = neighbour(r, rng);
    auto x = observe(r), y = observe(s);
    if (!x || !y) continue;
    ++pairs;
    const bool texts_equal = x->text == y->text;
    EXPECT_EQ(texts_equal, x->cls == y->cls) << x->text << "\n" << y->text;
    EXPECT_EQ(texts_equal, x->cls64 == y->cls64) << x->text << "\n" << y->text;
    EXPECT_EQ(x->json == y->json, x->key == y->key) << x->json << "\n" << y->json;
    (texts_equal ? same_class : other_class) += 1;
    same_json += x->json == y->json;
    for (const Seen* v : {&*x, &*y}) {  // across every graph seen, not only within a pair
      auto [it, fresh] = cls_of_text.emplace(v->text, v->cls);
      EXPECT_TRUE(fresh || it->second == v->cls);
      auto [jt, jfresh] = text_of_cls.emplace(std::make_pair(v->cls.lo, v->cls.hi), v->text);
      EXPECT_TRUE(jfresh || jt->second == v->text) << "two classes, one key:\n" << jt->second << "\n" << v->text;
      auto [kt, kfresh] = key_of_json.emplace(v->json, v->key);
      EXPECT_TRUE(kfresh || kt->second == v->key);
      auto [lt, lfresh] = json_of_key.emplace(v->key, v->json);
      EXPECT_TRUE(lfresh || lt->second == v->json) << "two graphs, one key:\n" << lt->second << "\n" << v->json;
    }
  }
  // The draw is meant to exercise both sides of each equivalence.
  EXPECT_GT(pairs, 300);
  EXPECT_GT(same_class, 60);
  EXPECT_GT(other_class, 60);
  EXPECT_GT(same_json, 10);
  EXPECT_GT(cls_of_text.size(), 200u);
}

Hash128 cls(const Recipe& r) {
  auto s = observe(r);
  EXPECT_TRUE(s.has_value());
  return s ? s->cls : Hash128{};
}

TEST(GraphHash, TheDocumentedEdgeCases) {
  Recipe base;
  base.b = 1, base.m = 4, base.k = 8, base.n = 4;
  Recipe bigger = base;
  bigger.m = 64, bigger.k = 128, bigger.n = 32;
  EXPECT_EQ(cls(base), cls(bigger));  // extents above 1 (and the packed strides they imply) left out
  Recipe batch = base;
  batch.b = 2;
  EXPECT_NE(cls(batch), cls(base));  // an extent of 1 is kept
  Recipe col = base, col2 = bigger;
  col.b_layout = col2.b_layout = 1;
  EXPECT_NE(cls(col), cls(base));  // packed strides become an axis order: another order, another class
  EXPECT_EQ(cls(col), cls(col2));
  Recipe odd = base;
  odd.a_layout = odd.b_layout = 3;  // the stride of an axis of extent 1 is no part of the order
  EXPECT_EQ(cls(odd), cls(base));
  Recipe odd_batch = batch;
  odd_batch.a_layout = 3;  // ... but with b > 1 the strides do not pack: kept as written
  EXPECT_NE(cls(odd_batch), cls(batch));
  Recipe pad = base, pad2 = bigger;
  pad.a_layout = pad2.a_layout = 2;  // not packed: extents and strides stay
  EXPECT_NE(cls(pad), cls(base));
  EXPECT_NE(cls(pad), cls(pad2));
  Recipe pad3 = pad;
  pad3.n = 16;  // ... while another tensor's packed extents are still left out
  EXPECT_EQ(cls(pad), cls(pad3));
  Recipe broadcast = base, broadcast2 = bigger;
  broadcast.bias = broadcast2.bias = 3;  // a stride-0 broadcast pins its tensor's extents
  EXPECT_NE(cls(broadcast), cls(broadcast2));
  Recipe renamed = base;
  renamed.name = "h";
  EXPECT_NE(cls(renamed), cls(base));  // the graph name is kept
}

// A tensor of rank above 16 (the walk's in-place limit) follows the same rule
// (keys of a graph not validated: serialize() and the walk both accept one).
TEST(GraphHash, HighRankTensors) {
  auto graph = [](std::vector<std::int64_t> dims, bool reversed, std::int64_t pad) {
    auto g = std::make_unique<Graph>();
    g->set_name("rank").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
    std::vector<std::int64_t> stride(dims.size());
    std::int64_t s = 1;
    for (std::size_t i = 0; i < dims.size(); ++i) {  // packed, axis 0 innermost when reversed
      const std::size_t a = reversed ? i : dims.size() - 1 - i;
      stride[a] = s;
      s *= dims[a] + (i == 0 ? pad : 0);
    }
    g->relu(g->tensor(dims, DataType::FLOAT, "X", stride))->set_output(true).set_name("Y");
    EXPECT_TRUE(g->validate().is_bad());  // validation caps the rank; the keys of the graph as built are taken
    return g;
  };
  std::vector<std::int64_t> d1(20, 1), d2(20, 1), d3(20, 1);
  d1[3] = 2, d1[7] = 3, d1[19] = 2;
  d2[3] = 5, d2[7] = 2, d2[19] = 4;  // other extents above 1, same places
  d3[3] = 2, d3[8] = 3, d3[19] = 2;  // an extent above 1 somewhere else
  std::vector<std::unique_ptr<Graph>> gs;
  for (auto* d : {&d1, &d2, &d3})
    for (bool rev : {false, true})
      for (std::int64_t pad : {0, 1}) gs.push_back(graph(*d, rev, pad));
  int same = 0;
  for (auto& x : gs)
    for (auto& y : gs) {
      const bool texts = plan_cache::layout_class_text(*x).value() == plan_cache::layout_class_text(*y).value();
      EXPECT_EQ(texts, plan_cache::layout_class128(*x).value() == plan_cache::layout_class128(*y).value());
      same += texts && x != y;
    }
  EXPECT_GE(same, 4);  // d1 and d2, in each packed order
}

TEST(GraphHash, TheKeyFollowsTheCanonicalJsonNormalisations) {
  auto key = [](const Recipe& r) { return observe(r).value().key; };
  Recipe a;
  a.act = 1, a.clip = 1;  // relu_lower_clip given as the integer 1 ...
  Recipe b = a;
  b.act = 2;  // ... or as 1.0: one JSON, one key
  EXPECT_EQ(key(a), key(b));
  Recipe nan1, nan2;
  nan1.scale = nan2.scale = 1;
  nan1.scale_value = std::numeric_limits<double>::quiet_NaN();
  nan2.scale_value = -std::numeric_limits<double>::quiet_NaN();  // every NaN is written "nan"
  EXPECT_EQ(key(nan1), key(nan2));
  Recipe zero = nan1, negzero = nan1;
  zero.scale_value = 0.0;
  negzero.scale_value = -0.0;  // "0.0" and "-0.0" are two graphs
  EXPECT_NE(key(zero), key(negzero));
  Recipe other = a;
  other.a_name = "A2";
  EXPECT_NE(key(other), key(a));
  Recipe shape = a;
  shape.m = 5;  // the key keeps every extent
  EXPECT_NE(key(shape), key(a));
}

}  // namespace
}  // namespace opgraph
