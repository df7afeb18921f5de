// tools/cli_common.cpp — argument parsing, graph loading, one-line errors.
#include "cli_common.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <fstream>
#include <sstream>

namespace opgraph::cli {

std::optional<std::string> Args::get(const std::string& flag) const {
  for (const auto& [f, v] : flags)
    if (f == flag) return v;
  return std::nullopt;
}

std::string clip(const std::string& s, std::size_t max_chars) {
  if (s.size() <= max_chars) return s;
  return s.substr(0, max_chars) + "...";
}

namespace {

// Control characters become spaces; a run of more than kMaxEchoChars characters
// without a space or a quote (a name from the graph file inside a library message)
// is cut there with "...", so the rest of the message, the rule, still shows.
std::string one_line(const std::string& s) {
  std::string out;
  out.reserve(std::min(s.size(), kMaxErrorChars + 8));
  std::size_t run = 0;
  for (char ch : s) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
    run = (ch == ' ' || ch == '\'') ? 0 : run + 1;
    if (run > kMaxEchoChars) {
      if (run == kMaxEchoChars + 1) out += "...";
      continue;
    }
    out += ch;
  }
  return out;
}

}  // namespace

int fail(const std::string& cmd, const std::string& message, int code) noexcept {
  try {
    std::string c = clip(one_line(cmd), 40), m = clip(one_line(message), kMaxErrorChars);
    std::fprintf(stderr, "opgraph %s: %s\n", c.c_str(), m.c_str());
  } catch (...) {  // no memory left even for the line: say so without allocating
    std::fputs("opgraph: an error occurred and there was no memory left to describe it\n", stderr);
  }
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
      fail(cmd, "unknown option '" + clip(flag) + "'", 2);
      return std::nullopt;
    }
    if (!has_eq) {
      if (i + 1 >= argc) {
        fail(cmd, "option '" + clip(flag) + "' needs a value", 2);
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
    fail(cmd, "cannot read graph file '" + clip(path) + "': no such file or not readable");
    return nullptr;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto g = Graph::deserialize(ss.str());
  if (g.is_bad()) {
    fail(cmd, "'" + clip(path) + "': " + g.status().to_string());
    return nullptr;
  }
  auto out = std::make_unique<Graph>(std::move(g.value()));
  if (Status s = out->validate(); s.is_bad()) {
    fail(cmd, "'" + clip(path) + "' is not a valid graph: " + s.to_string());
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
      fail(cmd, "--modes: unknown heuristic mode '" + clip(item) + "' (A, B, FALLBACK, OPENSOURCE)", 2);
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
    fail(cmd, flag + ": expected a non-negative integer, got '" + clip(text) + "'", 2);
    return std::nullopt;
  }
  return v;
}

std::optional<std::int64_t> parse_bytes(const std::string& cmd, const std::string& flag, const std::string& text) {
  std::string digits = text;
  int shift = 0;
  if (!digits.empty()) {
    const std::string suffixes = "KMGT";
    if (auto at = suffixes.find(static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back()))));
        at != std::string::npos) {
      shift = 10 * static_cast<int>(at + 1);
      digits.pop_back();
    }
  }
  std::int64_t v = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9' || __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) {
      ok = false;
      break;
    }
  }
  if (ok && shift > 0) {
    if (v > (std::numeric_limits<std::int64_t>::max() >> shift))
      ok = false;
    else
      v <<= shift;
  }
  if (!ok) {
    fail(cmd, flag + ": expected a byte count (digits, optional K/M/G/T suffix, below 2^63), got '" + clip(text) + "'",
         2);
    return std::nullopt;
  }
  return v;
}

bool apply_device(const std::string& cmd, const Args& args, Graph& g) {
  auto path = args.get("--device");
  if (!path) return true;
  std::ifstream f(*path);
  if (!f) {
    fail(cmd, "cannot read device file '" + clip(*path) + "'");
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto p = DeviceProperties::from_json(ss.str());
  if (p.is_bad()) {
    fail(cmd, "'" + clip(*path) + "': " + p.status().to_string());
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
