// tools/cli_common.h — what every `opgraph` subcommand shares: argument
// parsing, loading a graph file, one-line errors.
//
// Error contract: every failure prints ONE line to stderr, "opgraph <cmd>: <what>",
// and the subcommand returns a non-zero exit code (1 bad input, 2 usage). The
// line never runs away: strings from the user (names in graph JSON, paths, flags,
// values) are cut with clip() where they are echoed, and fail() cuts the whole
// message at kMaxErrorChars. main() turns any exception into such a line, exit 1.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opgraph/graph.h"

namespace opgraph::cli {

// argv after the subcommand: positionals and --flag value / --flag=value pairs.
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> flags;  // "--plan" -> "3"; a bare flag maps to ""
  std::optional<std::string> get(const std::string& flag) const;
  bool has(const std::string& flag) const { return get(flag).has_value(); }
};
// `value_flags` take a value; `bool_flags` do not. Unknown flags are an error line.
std::optional<Args> parse_args(const std::string& cmd, int argc, char** argv, const std::vector<std::string>& value_flags,
                               const std::vector<std::string>& bool_flags);

// `s` when it has at most `max_chars` characters, else its first `max_chars` and "...".
inline constexpr std::size_t kMaxEchoChars = 200;
inline constexpr std::size_t kMaxErrorChars = 1000;
std::string clip(const std::string& s, std::size_t max_chars = kMaxEchoChars);

// Prints "opgraph <cmd>: <message>" to stderr as one line (control characters
// become spaces; cut at kMaxErrorChars); returns `code`. Never throws.
int fail(const std::string& cmd, const std::string& message, int code = 1) noexcept;

// Reads and deserializes a graph file. On failure prints the one line and returns null.
std::unique_ptr<Graph> load_graph(const std::string& cmd, const std::string& path);

// "A,FALLBACK" -> modes (default A,FALLBACK when absent). Prints the error line on failure.
std::optional<std::vector<HeurMode>> parse_modes(const std::string& cmd, const std::optional<std::string>& text);
// A non-negative integer, or nullopt (after printing the error line naming `flag`).
std::optional<std::int64_t> parse_int(const std::string& cmd, const std::string& flag, const std::string& text);
// A byte count: digits with an optional K, M, G or T suffix (powers of 1024), at
// most 2^63 - 1; or nullopt (after printing the error line naming `flag`).
std::optional<std::int64_t> parse_bytes(const std::string& cmd, const std::string& flag, const std::string& text);
// Applies --device FILE.json when given (the planning target); prints the error line on failure.
bool apply_device(const std::string& cmd, const Args& args, Graph& g);

// "[1, 4, 8]"
std::string dims_to_string(const std::vector<std::int64_t>& dims);

// Calls f(offset) for every element of `t` in row-major order over its dims, with
// offset = sum(index[a] * stride[a]) in ELEMENTS (what read_element / write_element,
// opgraph/reference.h, take). A 0-d tensor has one element (offset 0); a zero
// extent, none. Precondition: `t` has one stride per dim (cli_layout.h checks it).
template <class F>
void for_each_offset(const Tensor& t, F&& f) {
  const auto& dims = t.get_dim();
  const auto& strides = t.get_stride();
  for (std::int64_t d : dims)
    if (d <= 0) return;
  std::vector<std::int64_t> idx(dims.size(), 0);
  std::int64_t offset = 0;
  while (true) {
    f(offset);
    std::size_t k = dims.size();
    while (true) {
      if (k == 0) return;
      --k;
      if (++idx[k] < dims[k]) {
        offset += strides[k];
        break;
      }
      offset -= (dims[k] - 1) * strides[k];
      idx[k] = 0;
    }
  }
}

}  // namespace opgraph::cli
