// runtime/nvrtc_compiler.cpp — NVRTC compile of one specialised kernel, and
// the structural check of a cubin.
#include "runtime/nvrtc_compiler.h"

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/kernel_sources.h"
#include "runtime/loader.h"
#include "runtime/log.h"

namespace opgraph::runtime {

namespace {

bool is_identifier(std::string_view s) noexcept {
  return is_plain_name(s) && !(s[0] >= '0' && s[0] <= '9');
}

// Destroys the program on every exit path.
struct ProgramGuard {
  const NvrtcApi* api;
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog) api->destroy_program(&prog);
  }
};

std::string nvrtc_text(const NvrtcApi& api, nvrtcResult r) {
  const char* s = api.get_error_string(r);
  return s ? s : "NVRTC error " + std::to_string(static_cast<int>(r));
}

}  // namespace

bool is_plain_name(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string KernelRequest::build_key() const {
  std::string b = source;
  for (const auto& d : defines) b += " -D" + d.name + "=" + d.value;
  return b;
}

std::string KernelRequest::key(std::string_view arch) const {
  nlohmann::json j;
  j["family"] = family;
  j["kernel"] = kernel;
  j["source"] = source;
  j["entry"] = entry;
  nlohmann::json defs = nlohmann::json::array();
  for (const auto& d : defines) defs.push_back({d.name, d.value});
  j["defines"] = defs;
  j["arch"] = std::string(arch);
  j["options"] = nvrtc_options(arch);
  return j.dump();
}

std::vector<std::string> nvrtc_options(std::string_view arch) {
  std::vector<std::string> out{"--gpu-architecture=" + std::string(arch), "-std=c++17", "-default-device"};
  // OPGRAPH_NVRTC_LINEINFO=1: source-line tables in the cubin, so a profiler
  // (Nsight Compute's source page) attributes stalls to kernel lines. Part
  // of every key (the options are), so such cubins never serve a plain run.
  if (const char* v = std::getenv("OPGRAPH_NVRTC_LINEINFO"); v && std::string_view(v) == "1") out.push_back("-lineinfo");
  return out;
}

Result<std::string> specialised_source(const KernelRequest& request) {
  const EmbeddedSource* src = find_embedded_source(request.source);
  if (!src) {
    return Status(ErrorCode::INVALID_VALUE, "kernel '" + request.family + "/" + request.kernel + "': source '" +
                                                request.source + "' is not an embedded kernel source");
  }
  std::string text = "// specialisation of " + request.source + " for " + request.family + "/" + request.kernel + "\n";
  for (const auto& d : request.defines) {
    if (!is_identifier(d.name) || d.value.find('\n') != std::string::npos) {
      return Status(ErrorCode::INVALID_VALUE, "kernel '" + request.family + "/" + request.kernel + "': define '" +
                                                  d.name + "' is not an identifier with a one-line value");
    }
    text += "#define " + d.name + " " + d.value + "\n";
  }
  text += "#line 1 \"" + request.source + "\"\n";
  text.append(src->text);
  return text;
}

Result<CompiledKernel> compile_kernel(const KernelRequest& request, std::string_view arch) {
  const std::string what = "kernel '" + request.family + "/" + request.kernel + "' for " + std::string(arch);
  if (!is_plain_name(request.family) || !is_plain_name(request.kernel) || !is_plain_name(arch)) {
    return Status(ErrorCode::INVALID_VALUE, what + ": family, kernel and arch must be [A-Za-z0-9_]+");
  }
  if (request.entry.empty()) return Status(ErrorCode::INVALID_VALUE, what + ": no entry name expression");
  auto api_r = nvrtc();
  if (api_r.is_bad()) return api_r.status();
  const NvrtcApi& api = **api_r;
  auto source = specialised_source(request);
  if (source.is_bad()) return source.status();

  std::vector<const char*> header_texts, header_names;
  std::vector<std::string> header_storage;  // NUL-terminated copies
  auto all = embedded_sources();
  header_storage.reserve(all.size());
  for (const auto& s : all) {
    header_storage.emplace_back(s.text);
    header_texts.push_back(header_storage.back().c_str());
    header_names.push_back(s.name.data());  // names are string literals, NUL-terminated
  }
  ProgramGuard guard{&api};
  nvrtcResult r = api.create_program(&guard.prog, source->c_str(), request.source.c_str(),
                                     static_cast<int>(header_texts.size()), header_texts.data(), header_names.data());
  if (r != NVRTC_SUCCESS) {
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED, what + ": nvrtcCreateProgram: " + nvrtc_text(api, r));
  }
  r = api.add_name_expression(guard.prog, request.entry.c_str());
  if (r != NVRTC_SUCCESS) {
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED,
                  what + ": nvrtcAddNameExpression('" + request.entry + "'): " + nvrtc_text(api, r));
  }
  const auto options = nvrtc_options(arch);
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  log(2, what + ": specialised source:\n" + *source);
  const nvrtcResult compiled = api.compile_program(guard.prog, static_cast<int>(opts.size()), opts.data());

  CompiledKernel out;
  out.arch = std::string(arch);
  std::size_t log_size = 0;
  if (api.get_program_log_size(guard.prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    api.get_program_log(guard.prog, out.log.data());
    out.log.resize(std::strlen(out.log.c_str()));
  }
  log(2, what + ": NVRTC log:\n" + (out.log.empty() ? std::string("(empty)") : out.log));
  if (compiled != NVRTC_SUCCESS) {
    std::string opt_text;
    for (const auto& o : options) opt_text += " " + o;
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED, what + ": " + nvrtc_text(api, compiled) + " (options" +
                                                           opt_text + "); compile log:\n" + out.log);
  }
  const char* lowered = nullptr;
  r = api.get_lowered_name(guard.prog, request.entry.c_str(), &lowered);
  if (r != NVRTC_SUCCESS || !lowered) {
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED,
                  what + ": nvrtcGetLoweredName('" + request.entry + "'): " + nvrtc_text(api, r));
  }
  out.lowered_name = lowered;
  std::size_t cubin_size = 0;
  r = api.get_cubin_size(guard.prog, &cubin_size);
  if (r != NVRTC_SUCCESS || cubin_size == 0) {
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED,
                  what + ": no cubin (is the arch a real sm_XY target?): " + nvrtc_text(api, r));
  }
  out.cubin.resize(cubin_size);
  r = api.get_cubin(guard.prog, out.cubin.data());
  if (r != NVRTC_SUCCESS) {
    return Status(ErrorCode::NVRTC_COMPILATION_FAILED, what + ": nvrtcGetCUBIN: " + nvrtc_text(api, r));
  }
  return out;
}

Status validate_cubin(std::string_view bytes, std::string_view lowered_name) {
  auto bad = [](const std::string& why) { return Status(ErrorCode::INVALID_VALUE, "cubin: " + why); };
  constexpr std::size_t kHeaderBytes = 64;  // Elf64_Ehdr
  if (bytes.size() < kHeaderBytes) return bad("shorter than an ELF header");
  if (std::memcmp(bytes.data(), "\x7f" "ELF", 4) != 0) return bad("no ELF magic");
  if (bytes[4] != 2) return bad("not a 64-bit ELF");
  if (bytes[5] != 1) return bad("not little-endian");
  auto u16 = [&](std::size_t off) {
    std::uint16_t v;
    std::memcpy(&v, bytes.data() + off, 2);
    return v;
  };
  auto u64 = [&](std::size_t off) {
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + off, 8);
    return v;
  };
  constexpr std::uint16_t kEmCuda = 190;
  if (u16(18) != kEmCuda) return bad("e_machine is " + std::to_string(u16(18)) + ", not EM_CUDA (190)");
  const std::uint64_t shoff = u64(40);
  const std::uint64_t shentsize = u16(58), shnum = u16(60);
  const std::uint64_t phoff = u64(32);
  const std::uint64_t phentsize = u16(54), phnum = u16(56);
  auto inside = [&](std::uint64_t off, std::uint64_t len) { return off <= bytes.size() && len <= bytes.size() - off; };
  if (shentsize < 64 || !inside(shoff, shnum * shentsize)) return bad("section table ends past the end of the file (truncated)");
  if (!inside(phoff, phnum * phentsize)) return bad("program header table ends past the end of the file (truncated)");
  constexpr std::uint32_t kShtNobits = 8;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::size_t sh = shoff + i * shentsize;
    std::uint32_t type;
    std::memcpy(&type, bytes.data() + sh + 4, 4);
    if (type != kShtNobits && !inside(u64(sh + 24), u64(sh + 32))) {
      return bad("section " + std::to_string(i) + " ends past the end of the file (truncated)");
    }
  }
  if (lowered_name.empty()) return Status::ok();
  // The name must be a function symbol of the symbol table, whole: a part of a longer symbol or a section name
  // holding it (.text.<name>) is not the kernel.
  auto u32 = [&](std::size_t off) {
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + off, 4);
    return v;
  };
  constexpr std::uint32_t kShtSymtab = 2;
  constexpr std::uint64_t kSymBytes = 24;  // Elf64_Sym
  constexpr unsigned kSttFunc = 2;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::size_t sh = shoff + i * shentsize;
    if (u32(sh + 4) != kShtSymtab) continue;
    const std::uint64_t sym_off = u64(sh + 24), sym_len = u64(sh + 32), link = u32(sh + 40);
    if (link >= shnum) return bad("the symbol table's string table index " + std::to_string(link) + " is out of range");
    const std::size_t str_sh = shoff + link * shentsize;
    const std::uint64_t str_off = u64(str_sh + 24), str_len = u64(str_sh + 32);
    if (!inside(str_off, str_len)) return bad("the symbol table's string table ends past the end of the file");
    const std::string_view strtab = bytes.substr(str_off, str_len);
    for (std::uint64_t s = 0; s + kSymBytes <= sym_len; s += kSymBytes) {
      const std::size_t sym = sym_off + s;
      const std::uint32_t name_at = u32(sym);
      const unsigned type = static_cast<unsigned char>(bytes[sym + 4]) & 0xfu;
      if (type != kSttFunc || name_at >= strtab.size()) continue;
      const std::string_view rest = strtab.substr(name_at);
      if (rest.size() > lowered_name.size() && rest.compare(0, lowered_name.size(), lowered_name) == 0 &&
          rest[lowered_name.size()] == '\0')
        return Status::ok();
    }
  }
  return bad("has no function symbol named '" + std::string(lowered_name) + "'");
}

}  // namespace opgraph::runtime
