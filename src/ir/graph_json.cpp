// ir/graph_json.cpp — canonical JSON of a graph, and its inverse.
//
// Canonical: object keys sorted (nlohmann's std::map), tensors listed by
// ascending uid, nodes in graph order, ports by name, attributes by name with
// their typed values, no whitespace. deserialize() accepts exactly this schema
// and refuses anything else with UNSUPPORTED_GRAPH_FORMAT naming the JSON path;
// it never throws and never trusts a count or an index it has not checked.
//
// Two spellings JSON itself lacks:
//  * a non-finite float value (a floating pass-by-value scalar's `value`, a FLOAT
//    attribute, an entry of a FLOAT_LIST attribute) is written as the string "nan",
//    "inf" or "-inf" (nlohmann would write null, which nothing reads back); every NaN
//    is written "nan" and read back as the quiet NaN, so its sign and payload are not
//    kept. Integer fields never take these strings.
//  * an object that names one key twice is refused with the key's path: nlohmann
//    keeps the last of them without a word, and another reader might keep the first.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph_hash.h"
#include "opgraph/op_graph.h"

namespace opgraph {

using json = nlohmann::json;
constexpr int kJsonVersion = 1;

namespace {

json float_to_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// A number, or one of float_to_json's strings.
bool float_from_json(const json& j, double* out) {
  if (j.is_number()) { *out = j.get<double>(); return true; }
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  if (s == "nan") *out = std::numeric_limits<double>::quiet_NaN();
  else if (s == "inf") *out = std::numeric_limits<double>::infinity();
  else if (s == "-inf") *out = -std::numeric_limits<double>::infinity();
  else return false;
  return true;
}

// `spec` (nullptr for an unknown attribute) types the value: a FLOAT / FLOAT_LIST
// attribute set from integers is written as floats, the form deserialize() reads it
// back in, so the round trip is the identity and 6 and 6.0 give one key().
json attr_to_json(const AttrValue& v, const AttrSpec* spec) {
  if (spec && spec->type == AttrType::FLOAT)
    if (const auto* i = std::get_if<std::int64_t>(&v)) return float_to_json(static_cast<double>(*i));
  if (spec && spec->type == AttrType::FLOAT_LIST)
    if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) {
      json a = json::array();
      for (auto x : *l) a.push_back(float_to_json(static_cast<double>(x)));
      return a;
    }
  if (const auto* d = std::get_if<double>(&v)) return float_to_json(*d);
  if (const auto* l = std::get_if<std::vector<double>>(&v)) {
    json a = json::array();
    for (double x : *l) a.push_back(float_to_json(x));
    return a;
  }
  return std::visit([](const auto& x) { return json(x); }, v);
}

// The SAX handler deserialize() parses with: nlohmann's DOM builder (every event is
// forwarded to it), plus the path of the value being read and the keys seen in each
// open object; `duplicate` is the path of the first key an object names twice. (Not
// nlohmann's parser callback: its end_object scans the parent array for a discarded
// element, which makes a graph's long "nodes" array quadratic to read.)
class KeyCheckingSax {
 public:
  explicit KeyCheckingSax(json& result) : dom_(result, /*allow_exceptions=*/false) {}
  std::optional<std::string> duplicate;
  bool errored() const { return dom_.is_errored(); }

  bool null() { element_done(); return dom_.null(); }
  bool boolean(bool v) { element_done(); return dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { element_done(); return dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { element_done(); return dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { element_done(); return dom_.number_float(v, s); }
  bool string(json::string_t& v) { element_done(); return dom_.string(v); }
  bool binary(json::binary_t& v) { element_done(); return dom_.binary(v); }
  bool start_object(std::size_t n) { open_.push_back({}); return dom_.start_object(n); }
  bool key(json::string_t& k) {
    if (!open_.empty()) {
      auto& f = open_.back();
      f.key = k;
      if (!f.keys.insert(k).second && !duplicate) duplicate = path();
    }
    return dom_.key(k);
  }
  bool end_object() { close(); return dom_.end_object(); }
  bool start_array(std::size_t n) { open_.push_back({true}); return dom_.start_array(n); }
  bool end_array() { close(); return dom_.end_array(); }
  bool parse_error(std::size_t at, const std::string& token, const nlohmann::detail::exception& e) {
    return dom_.parse_error(at, token, e);
  }

 private:
  struct Frame {
    bool array = false;
    std::size_t index = 0;  // arrays: elements completed so far
    std::string key;        // objects: the key being read
    std::unordered_set<std::string> keys;
  };
  std::string path() const {
    std::string p;
    for (const auto& f : open_) {
      if (f.array) p += "[" + std::to_string(f.index) + "]";
      else if (!f.key.empty()) p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }
  void element_done() {
    if (!open_.empty() && open_.back().array) ++open_.back().index;
  }
  void close() {
    if (!open_.empty()) open_.pop_back();
    element_done();
  }
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> open_;
};

Status bad(const std::string& path, const std::string& what) {
  return {ErrorCode::UNSUPPORTED_GRAPH_FORMAT, "graph JSON, " + path + ": " + what};
}

Result<std::vector<std::int64_t>> int_list(const json& j, const std::string& path) {
  if (!j.is_array()) return bad(path, "expected an array of integers");
  if (j.size() > 64) return bad(path, "more than 64 entries");
  std::vector<std::int64_t> v;
  for (const auto& x : j) {
    if (!x.is_number_integer()) return bad(path, "expected an array of integers");
    v.push_back(x.get<std::int64_t>());
  }
  return v;
}

Result<DataType> dtype_of(const json& j, const std::string& path) {
  if (!j.is_string()) return bad(path, "expected a data type name");
  auto t = data_type_from_string(j.get<std::string>());
  if (!t) return bad(path, "unknown data type '" + j.get<std::string>() + "'");
  return *t;
}

Result<AttrValue> attr_from_json(const json& j, const AttrSpec* spec, const std::string& path) {
  AttrType type;
  if (spec) type = spec->type;
  else if (j.is_boolean()) type = AttrType::BOOL;
  else if (j.is_number_integer()) type = AttrType::INT;
  else if (j.is_number()) type = AttrType::FLOAT;
  else if (j.is_string()) type = AttrType::STRING;
  else if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& x) { return x.is_number_integer(); }))
    type = AttrType::INT_LIST;
  else type = AttrType::FLOAT_LIST;
  switch (type) {
    case AttrType::BOOL:
      if (!j.is_boolean()) return bad(path, "expected a bool");
      return AttrValue{j.get<bool>()};
    case AttrType::INT:
      if (!j.is_number_integer()) return bad(path, "expected an integer");
      return AttrValue{j.get<std::int64_t>()};
    case AttrType::FLOAT: {
      double d = 0;
      if (!float_from_json(j, &d)) return bad(path, "expected a number (or \"nan\", \"inf\", \"-inf\")");
      return AttrValue{d};
    }
    case AttrType::STRING: case AttrType::ENUM:
      if (!j.is_string()) return bad(path, "expected a string");
      return AttrValue{j.get<std::string>()};
    case AttrType::INT_LIST: {
      auto v = int_list(j, path);
      if (!v) return v.status();
      return AttrValue{v.value()};
    }
    case AttrType::FLOAT_LIST: {
      if (!j.is_array() || j.size() > 4096) return bad(path, "expected an array of numbers");
      std::vector<double> v;
      for (const auto& x : j) {
        double d = 0;
        if (!float_from_json(x, &d)) return bad(path, "expected an array of numbers (or \"nan\", \"inf\", \"-inf\")");
        v.push_back(d);
      }
      return AttrValue{v};
    }
  }
  return bad(path, "unreadable attribute");
}

}  // namespace

struct GraphJson {
  static json to_json(const OpGraph& g) {
    json j;
    j["version"] = kJsonVersion;
    const auto& c = g.ctx_;
    j["context"] = {{"name", c.name},
                    {"io_data_type", to_string(c.io_data_type)},
                    {"intermediate_data_type", to_string(c.intermediate_data_type)},
                    {"compute_data_type", to_string(c.compute_data_type)}};
    std::vector<const Tensor*> ts;
    for (const auto& t : g.tensors_) ts.push_back(t.get());
    std::stable_sort(ts.begin(), ts.end(), [](auto* a, auto* b) { return a->get_uid() < b->get_uid(); });
    json tensors = json::array();
    for (const Tensor* t : ts) {
      json tj = {{"uid", t->get_uid()},
                 {"uid_by_user", t->get_uid_assigned_by_user()},
                 {"name", t->get_name()},
                 {"dim", t->get_dim()},
                 {"stride", t->get_stride()},
                 {"data_type", to_string(t->get_data_type())},
                 {"is_virtual", t->get_is_virtual()},
                 {"user_set", {{"dim", t->dim_set_by_user()},
                               {"stride", t->stride_set_by_user()},
                               {"data_type", t->data_type_set_by_user()}}},
                 {"reordering_type", to_string(t->get_reordering_type())},
                 {"alignment", t->get_alignment()}};
      if (t->get_ragged_offset()) tj["ragged_offset"] = t->get_ragged_offset()->get_uid();
      if (const auto& p = t->get_pass_by_value()) {
        json pv = {{"data_type", to_string(p->data_type)},
                   {"kind", p->kind == ScalarKind::RUNTIME_PARAM ? "RUNTIME_PARAM" : "COMPILE_TIME_CONST"}};
        if (is_integral(p->data_type) || p->data_type == DataType::BOOLEAN) pv["value"] = p->i;
        else pv["value"] = float_to_json(p->f);
        tj["pass_by_value"] = pv;
      }
      tensors.push_back(std::move(tj));
    }
    j["tensors"] = std::move(tensors);
    json nodes = json::array();
    for (const auto& n : g.nodes_) {
      json nj = {{"op", n->op()}, {"name", n->name()}, {"compute_data_type", to_string(n->compute_data_type())}};
      json ins = json::object(), outs = json::object(), attrs = json::object();
      const OpSpec& spec = n->spec();
      for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
        if (n->inputs()[i].empty()) continue;
        json uids = json::array();
        for (const auto& t : n->inputs()[i]) uids.push_back(t->get_uid());
        ins[std::string(spec.inputs[i].name)] = uids;
      }
      for (std::size_t i = 0; i < spec.outputs.size(); ++i)
        if (!n->outputs()[i].empty()) outs[std::string(spec.outputs[i].name)] = n->outputs()[i].front()->get_uid();
      for (const auto& [k, v] : n->attributes().values()) attrs[k] = attr_to_json(v, spec.find_attr(k));
      nj["inputs"] = ins;
      nj["outputs"] = outs;
      nj["attributes"] = attrs;
      nodes.push_back(std::move(nj));
    }
    j["nodes"] = std::move(nodes);
    return j;
  }

  static Status from_json(OpGraph& g, const json& j) {
    if (!j.is_object()) return bad("$", "expected an object");
    if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<std::int64_t>() != kJsonVersion)
      return bad("version", "expected " + std::to_string(kJsonVersion));
    for (const char* k : {"context", "tensors", "nodes"})
      if (!j.contains(k)) return bad(k, "missing");
    const json& c = j["context"];
    if (!c.is_object()) return bad("context", "expected an object");
    if (c.contains("name")) {
      if (!c["name"].is_string()) return bad("context.name", "expected a string");
      g.ctx_.name = c["name"].get<std::string>();
    }
    DataType* fields[] = {&g.ctx_.io_data_type, &g.ctx_.intermediate_data_type, &g.ctx_.compute_data_type};
    const char* names[] = {"io_data_type", "intermediate_data_type", "compute_data_type"};
    for (int i = 0; i < 3; ++i) {
      if (!c.contains(names[i])) continue;
      auto t = dtype_of(c[names[i]], std::string("context.") + names[i]);
      if (!t) return t.status();
      *fields[i] = t.value();
    }

    const json& tj = j["tensors"];
    if (!tj.is_array()) return bad("tensors", "expected an array");
    std::map<std::int64_t, TensorPtr> by_uid;
    std::vector<std::pair<TensorPtr, std::int64_t>> ragged;
    for (std::size_t i = 0; i < tj.size(); ++i) {
      const json& x = tj[i];
      std::string p = "tensors[" + std::to_string(i) + "]";
      if (!x.is_object()) return bad(p, "expected an object");
      if (!x.contains("uid") || !x["uid"].is_number_integer()) return bad(p + ".uid", "expected an integer");
      auto uid = x["uid"].get<std::int64_t>();
      if (uid < 0) return bad(p + ".uid", "must be 0 or more");
      if (by_uid.count(uid)) return bad(p + ".uid", "uid " + std::to_string(uid) + " listed twice");
      auto t = std::make_shared<Tensor>();
      bool uid_user = x.value("uid_by_user", false);
      if (x.contains("name")) {
        if (!x["name"].is_string()) return bad(p + ".name", "expected a string");
        t->set_name(x["name"].get<std::string>());
      }
      std::vector<std::int64_t> dim, stride;
      if (x.contains("dim")) {
        auto d = int_list(x["dim"], p + ".dim");
        if (!d) return d.status();
        dim = d.value();
      }
      if (x.contains("stride")) {
        auto s = int_list(x["stride"], p + ".stride");
        if (!s) return s.status();
        stride = s.value();
      }
      DataType dt = DataType::NOT_SET;
      if (x.contains("data_type")) {
        auto d = dtype_of(x["data_type"], p + ".data_type");
        if (!d) return d.status();
        dt = d.value();
      }
      bool ud = false, us = false, ut = false;
      if (x.contains("user_set")) {
        const json& u = x["user_set"];
        if (!u.is_object()) return bad(p + ".user_set", "expected an object");
        for (auto [key, flag] : {std::pair{"dim", &ud}, std::pair{"stride", &us}, std::pair{"data_type", &ut}}) {
          if (!u.contains(key)) continue;
          if (!u[key].is_boolean()) return bad(p + ".user_set." + key, "expected a bool");
          *flag = u[key].get<bool>();
        }
      }
      if (x.contains("is_virtual")) {
        if (!x["is_virtual"].is_boolean()) return bad(p + ".is_virtual", "expected a bool");
        t->set_is_virtual(x["is_virtual"].get<bool>());
      }
      if (x.contains("reordering_type")) {
        if (!x["reordering_type"].is_string()) return bad(p + ".reordering_type", "expected a string");
        auto r = tensor_reordering_from_string(x["reordering_type"].get<std::string>());
        if (!r) return bad(p + ".reordering_type", "unknown reordering");
        t->set_reordering_type(*r);
      }
      if (x.contains("alignment")) {
        if (!x["alignment"].is_number_integer()) return bad(p + ".alignment", "expected an integer");
        t->set_alignment(x["alignment"].get<std::int64_t>());
      }
      if (x.contains("pass_by_value")) {
        const json& pv = x["pass_by_value"];
        if (!pv.is_object() || !pv.contains("data_type") || !pv.contains("value"))
          return bad(p + ".pass_by_value", "expected {data_type, kind, value}");
        auto d = dtype_of(pv["data_type"], p + ".pass_by_value.data_type");
        if (!d) return d.status();
        ScalarValue v;
        v.data_type = d.value();
        std::string kind = pv.value("kind", std::string("RUNTIME_PARAM"));
        if (kind != "RUNTIME_PARAM" && kind != "COMPILE_TIME_CONST") return bad(p + ".pass_by_value.kind", "unknown kind");
        v.kind = kind == "RUNTIME_PARAM" ? ScalarKind::RUNTIME_PARAM : ScalarKind::COMPILE_TIME_CONST;
        if (is_integral(v.data_type) || v.data_type == DataType::BOOLEAN) {
          if (!pv["value"].is_number_integer()) return bad(p + ".pass_by_value.value", "expected an integer");
          v.i = pv["value"].get<std::int64_t>();
        } else if (!float_from_json(pv["value"], &v.f)) {
          return bad(p + ".pass_by_value.value", "expected a number (or \"nan\", \"inf\", \"-inf\")");
        }
        t->set_pass_by_value(v);
      }
      t->set_dim(dim).set_stride(stride).set_data_type(dt);
      t->set_uid(uid);
      Tensor::Internal::mark_user_flags(*t, ud, us, ut, uid_user);
      if (x.contains("ragged_offset")) {
        if (!x["ragged_offset"].is_number_integer()) return bad(p + ".ragged_offset", "expected a uid");
        ragged.emplace_back(t, x["ragged_offset"].get<std::int64_t>());
      }
      by_uid[uid] = t;
      g.tensors_.push_back(t);
      g.registered_.insert(t.get());
    }
    for (auto& [t, uid] : ragged) {
      auto it = by_uid.find(uid);
      if (it == by_uid.end() || it->second == t)
        return bad("tensor '" + t->get_name() + "'.ragged_offset", "uid " + std::to_string(uid) + " names no other tensor");
      t->set_ragged_offset(it->second);
    }
    for (auto& [t, uid] : ragged)
      if (t->get_ragged_offset()->get_ragged_offset())
        return bad("tensor '" + t->get_name() + "'.ragged_offset", "an offset tensor cannot itself be ragged");

    const json& nj = j["nodes"];
    if (!nj.is_array()) return bad("nodes", "expected an array");
    for (std::size_t i = 0; i < nj.size(); ++i) {
      const json& x = nj[i];
      std::string p = "nodes[" + std::to_string(i) + "]";
      if (!x.is_object() || !x.contains("op") || !x["op"].is_string()) return bad(p + ".op", "expected an op name");
      const OpSpec* spec = find_op_spec(x["op"].get<std::string>());
      if (!spec) return bad(p + ".op", "unknown op '" + x["op"].get<std::string>() + "'");
      std::string name = x.contains("name") && x["name"].is_string() ? x["name"].get<std::string>() : g.unique_node_name(spec->name);
      auto node = std::make_shared<Node>(spec, name);
      if (x.contains("compute_data_type")) {
        auto d = dtype_of(x["compute_data_type"], p + ".compute_data_type");
        if (!d) return d.status();
        node->set_compute_data_type(d.value());
      }
      Attributes attrs;
      attrs.set_name(name);
      attrs.set_compute_data_type(node->compute_data_type());
      if (x.contains("attributes")) {
        if (!x["attributes"].is_object()) return bad(p + ".attributes", "expected an object");
        for (auto it = x["attributes"].begin(); it != x["attributes"].end(); ++it) {
          auto v = attr_from_json(it.value(), spec->find_attr(it.key()), p + ".attributes." + it.key());
          if (!v) return v.status();
          attrs.set(it.key(), v.value());
        }
      }
      node->set_attributes(attrs);
      for (const char* dir : {"inputs", "outputs"}) {
        if (!x.contains(dir)) continue;
        const json& ports = x[dir];
        if (!ports.is_object()) return bad(p + "." + dir, "expected an object");
        bool is_in = std::string(dir) == "inputs";
        for (auto it = ports.begin(); it != ports.end(); ++it) {
          std::string pp = p + "." + dir + "." + it.key();
          int idx = is_in ? spec->input_index(it.key()) : spec->output_index(it.key());
          if (idx < 0) return bad(pp, "op '" + std::string(spec->name) + "' has no such port");
          std::vector<std::int64_t> uids;
          if (is_in) {
            auto l = int_list(it.value(), pp);
            if (!l) return l.status();
            uids = l.value();
          } else {
            if (!it.value().is_number_integer()) return bad(pp, "expected a uid");
            uids = {it.value().get<std::int64_t>()};
          }
          for (auto uid : uids) {
            auto t = by_uid.find(uid);
            if (t == by_uid.end()) return bad(pp, "uid " + std::to_string(uid) + " names no tensor");
            if (is_in) node->bind_input(static_cast<std::size_t>(idx), t->second);
            else node->bind_output(static_cast<std::size_t>(idx), t->second);
          }
        }
      }
      g.nodes_.push_back(std::move(node));
    }
    return Status::ok();
  }
};

Result<std::string> OpGraph::serialize() {
  if (!frozen_) OPGRAPH_CHECK(assign_uids());
  return GraphJson::to_json(*this).dump();
}

Result<OpGraph> OpGraph::deserialize(std::string_view text) {
  json j;
  KeyCheckingSax sax(j);
  if (!json::sax_parse(text.begin(), text.end(), &sax) || sax.errored())
    return Status(ErrorCode::UNSUPPORTED_GRAPH_FORMAT, "graph JSON: malformed JSON");
  if (sax.duplicate) return bad(*sax.duplicate, "the key appears twice in one object");
  OpGraph g;
  try {
    OPGRAPH_CHECK(GraphJson::from_json(g, j));
  } catch (const std::exception& e) {  // nlohmann type errors we did not foresee
    return Status(ErrorCode::UNSUPPORTED_GRAPH_FORMAT, std::string("graph JSON: ") + e.what());
  }
  return g;
}

// A hash of what serialize() writes, walked from the graph (ir/graph_hash.h): one
// canonical JSON gives one key, without building the JSON.
Result<std::uint64_t> OpGraph::key() {
  auto h = graph_hash::content_hash(*this, graph_hash::Mode::GRAPH);
  if (!h) return h.status();
  return h->fold();
}

}  // namespace opgraph
