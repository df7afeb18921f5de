// tools/cli_common.cpp — argument parsing, graph loading, one-line errors.
#include "cli_common.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace opgraph::cli {

std::optional<std::string> Args::get(const std::string& flag) const {
  for (const auto& [f, v] : flags)
    if (f == flag) return v;
  return std::nullopt;
}

int fail(const std::string& cmd, const std::string& message, int code) {
  std::string m = message;
  std::replace(m.begin(), m.end(), '\n', ' ');
  std::fprintf(stderr, "opgraph %s: %s\n", cmd.c_str(), m.c_str());
  return code;
}

std::optional<Args> parse_args(const std::string& cmd, int argc, char** argv, const std::vector<std::string>& value_flags,
                               const std::vector<std::string>& bool_flags) {
  Args a;
  auto in = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = 0; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0) {
      a.positional.push_back(s);
      continue;
    }
    std::string flag = s, value;
    bool has_eq = false;
    if (auto eq = s.find('='); eq != std::string::npos) {
      flag = s.substr(0, eq);
      value = s.substr(eq + 1);
      has_eq = true;
    }
    if (in(bool_flags, flag)) {
      a.flags.emplace_back(flag, "");
      continue;
    }
    if (!in(value_flags, flag)) {
      fail(cmd, "unknown option '" + flag + "'", 2);
      return std::nullopt;
    }
    if (!has_eq) {
      if (i + 1 >= argc) {
        fail(cmd, "option '" + flag + "' needs a value", 2);
        return std::nullopt;
      }
      value = argv[++i];
    }
    a.flags.emplace_back(flag, value);
  }
  return a;
}

std::unique_ptr<Graph> load_graph(const std::string& cmd, const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    fail(cmd, "cannot read graph file '" + path + "': no such file or not readable");
    return nullptr;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto g = Graph::deserialize(ss.str());
  if (g.is_bad()) {
    fail(cmd, "'" + path + "': " + g.status().to_string());
    return nullptr;
  }
  auto out = std::make_unique<Graph>(std::move(g.value()));
  if (Status s = out->validate(); s.is_bad()) {
    fail(cmd, "'" + path + "' is not a valid graph: " + s.to_string());
    return nullptr;
  }
  return out;
}

std::optional<std::vector<HeurMode>> parse_modes(const std::string& cmd, const std::optional<std::string>& text) {
  if (!text) return std::vector<HeurMode>{HeurMode::A, HeurMode::FALLBACK};
  std::vector<HeurMode> out;
  std::stringstream ss(*text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto m = heur_mode_from_string(item);
    if (!m) {
      fail(cmd, "--modes: unknown heuristic mode '" + item + "' (A, B, FALLBACK, OPENSOURCE)", 2);
      return std::nullopt;
    }
    out.push_back(*m);
  }
  if (out.empty()) {
    fail(cmd, "--modes: give at least one mode", 2);
    return std::nullopt;
  }
  return out;
}

std::optional<std::int64_t> parse_int(const std::string& cmd, const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v < 0) {
    fail(cmd, flag + ": expected a non-negative integer, got '" + text + "'", 2);
    return std::nullopt;
  }
  return v;
}

bool apply_device(const std::string& cmd, const Args& args, Graph& g) {
  auto path = args.get("--device");
  if (!path) return true;
  std::ifstream f(*path);
  if (!f) {
    fail(cmd, "cannot read device file '" + *path + "'");
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto p = DeviceProperties::from_json(ss.str());
  if (p.is_bad()) {
    fail(cmd, "'" + *path + "': " + p.status().to_string());
    return false;
  }
  g.set_device_properties(p.value());
  return true;
}

std::string dims_to_string(const std::vector<std::int64_t>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

}  // namespace opgraph::cli
