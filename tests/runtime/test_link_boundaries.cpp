// Link boundaries: no built opgraph file depends on libcuda, libnvrtc or
// libcudnn at link time. Executables: no DT_NEEDED entry names them. Static
// libraries: no object references any of their symbols (cu*, nvrtc*, cudnn*)
// as undefined, so nothing linking them can acquire such a dependency. The
// ELF and ar formats are parsed here, so the test needs no binutils.
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <class T>
bool read_at(const std::string& b, std::size_t off, T& out) {
  if (off > b.size() || sizeof(T) > b.size() - off) return false;
  std::memcpy(&out, b.data() + off, sizeof(T));
  return true;
}

std::vector<Elf64_Shdr> sections(const std::string& elf) {
  Elf64_Ehdr eh;
  std::vector<Elf64_Shdr> out;
  if (!read_at(elf, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    return out;
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!read_at(elf, eh.e_shoff + std::size_t{i} * eh.e_shentsize, sh)) return {};
    out.push_back(sh);
  }
  return out;
}

std::string cstr_at(const std::string& b, std::size_t off) {
  if (off >= b.size()) return {};
  return std::string(b.c_str() + off);
}

std::vector<std::string> needed_libraries(const std::string& path) {
  const std::string elf = read_all(path);
  auto secs = sections(elf);
  std::vector<std::string> out;
  for (const auto& sh : secs) {
    if (sh.sh_type != SHT_DYNAMIC || sh.sh_link >= secs.size()) continue;
    const auto& str = secs[sh.sh_link];
    for (std::size_t off = sh.sh_offset; off + sizeof(Elf64_Dyn) <= sh.sh_offset + sh.sh_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      if (!read_at(elf, off, d) || d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_NEEDED) out.push_back(cstr_at(elf, str.sh_offset + d.d_un.d_val));
    }
  }
  return out;
}

void undefined_symbols_of_object(const std::string& obj, std::vector<std::string>& out) {
  auto secs = sections(obj);
  for (const auto& sh : secs) {
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= secs.size()) continue;
    const auto& str = secs[sh.sh_link];
    for (std::size_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym s;
      if (!read_at(obj, off, s)) break;
      if (s.st_shndx == SHN_UNDEF && s.st_name != 0) out.push_back(cstr_at(obj, str.sh_offset + s.st_name));
    }
  }
}

// Undefined symbols of every ELF member of an ar archive.
std::vector<std::string> archive_undefined_symbols(const std::string& path, int* members) {
  const std::string ar = read_all(path);
  std::vector<std::string> out;
  *members = 0;
  if (ar.compare(0, 8, "!<arch>\n") != 0) return out;
  std::size_t off = 8;
  while (off + 60 <= ar.size()) {
    const std::size_t size = std::stoull(ar.substr(off + 48, 10));
    const std::size_t data = off + 60;
    if (data + size > ar.size()) break;
    const std::string member = ar.substr(data, size);
    if (member.compare(0, 4, ELFMAG) == 0) {
      ++*members;
      undefined_symbols_of_object(member, out);
    }
    off = data + size + (size & 1);
  }
  return out;
}

bool is_cuda_library(const std::string& name) {
  return name.find("libcuda") != std::string::npos || name.find("libnvrtc") != std::string::npos ||
         name.find("libcudnn") != std::string::npos;
}

const std::regex kCudaSymbol("^(cu[A-Z]|nvrtc[A-Z]|cudnn[A-Z]).*");

}  // namespace

TEST(LinkBoundaries, ExecutablesHaveNoCudaDtNeeded) {
  for (const std::string& path : {std::string("/proc/self/exe"), std::string(OPGRAPH_RUNTIME_PROBE),
                                 std::string(OPGRAPH_TOOL)}) {
    auto needed = needed_libraries(path);
    // The parser found the dynamic section (every executable needs libc).
    EXPECT_NE(std::find(needed.begin(), needed.end(), "libc.so.6"), needed.end()) << path;
    for (const auto& n : needed) EXPECT_FALSE(is_cuda_library(n)) << path << " needs " << n;
  }
}

TEST(LinkBoundaries, StaticLibrariesReferenceNoCudaSymbol) {
  for (const std::string& path : {std::string(OPGRAPH_IR_LIB), std::string(OPGRAPH_RUNTIME_LIB),
                                 std::string(OPGRAPH_SMOKE_LIB), std::string(OPGRAPH_PLAN_LIB),
                                 std::string(OPGRAPH_API_LIB)}) {
    int members = 0;
    auto undefined = archive_undefined_symbols(path, &members);
    EXPECT_GT(members, 0) << path;
    EXPECT_FALSE(undefined.empty()) << path;
    for (const auto& s : undefined) EXPECT_FALSE(std::regex_match(s, kCudaSymbol)) << path << " references " << s;
  }
  // The runtime resolves through dlopen/dlsym: the parser must see those.
  int members = 0;
  auto runtime_undefined = archive_undefined_symbols(OPGRAPH_RUNTIME_LIB, &members);
  EXPECT_NE(std::find(runtime_undefined.begin(), runtime_undefined.end(), "dlsym"), runtime_undefined.end());
}
