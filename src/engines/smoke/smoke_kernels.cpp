// engines/smoke/smoke_kernels.cpp — naming and listing smoke specialisations.
#include "engines/smoke/smoke_kernels.h"

#include <charconv>

namespace opgraph::smoke {

namespace {

std::string shortest(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  // A C++ floating literal: make sure it has a '.' or an exponent.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// "2.5" -> "2p5", "-1" -> "m1": readable and safe in file names.
std::string name_part(double v) {
  std::string out;
  for (char c : shortest(v)) {
    if (c == '.') out += 'p';
    else if (c == '-') out += 'm';
    else if (c == '+') continue;
    else out += c;
  }
  return out;
}

// "(text)". Built by appending: GCC 12 -O2 warns falsely (-Wrestrict) on
// "literal" + std::string here.
std::string parenthesised(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('(');
  out.append(text);
  out.push_back(')');
  return out;
}

}  // namespace

runtime::KernelRequest affine_request(const AffineParams& params) {
  const bool f64 = params.type == SmokeType::F64;
  runtime::KernelRequest r;
  r.family = "smoke";
  r.kernel = f64 ? "affine_f64" : "affine_f32";
  r.kernel.append("_a").append(name_part(params.a)).append("_b").append(name_part(params.b));
  r.source = "smoke/kernels/smoke.cu";
  r.entry = f64 ? "smoke_affine<double>" : "smoke_affine<float>";
  r.defines = {{"OPGRAPH_SMOKE_A", parenthesised(shortest(params.a))},
               {"OPGRAPH_SMOKE_B", parenthesised(shortest(params.b))}};
  return r;
}

std::vector<AffineParams> declared_params() {
  std::vector<AffineParams> out;
  for (int i = 0; i < 10; ++i) {
    // Constants exact in float, distinct per kernel, both signs.
    out.push_back({0.5 * (i + 1) * (i % 2 ? -1 : 1), 0.25 * i - 1.0, i < 8 ? SmokeType::F32 : SmokeType::F64});
  }
  return out;
}

std::vector<runtime::KernelRequest> declared_specialisations() {
  std::vector<runtime::KernelRequest> out;
  for (const auto& p : declared_params()) out.push_back(affine_request(p));
  return out;
}

}  // namespace opgraph::smoke
