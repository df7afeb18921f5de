// tests/plan/test_cli.cpp — the built `opgraph` tool on bad input: one clear line
// on stderr and a non-zero exit; and `opgraph plan` on a real graph file.
// `opgraph run` on graphs too large to run, or whose layout arithmetic overflows:
// refused before anything is allocated (--max-bytes), never an abort.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "fakes.h"

#ifdef OPGRAPH_TOOL_PATH
namespace opgraph {
namespace {

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

ToolRun run_tool(const std::string& args) {
  static int n = 0;
  std::string base = ::testing::TempDir() + "/opgraph_cli_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  std::string cmd = std::string(OPGRAPH_TOOL_PATH) + " " + args + " >" + base + ".out 2>" + base + ".err";
  int rc = std::system(cmd.c_str());
  ToolRun r;
  r.exit_code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  return r;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

void expect_one_line_error(const ToolRun& r, const std::string& needle) {
  EXPECT_NE(r.exit_code, 0);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
}

TEST(Cli, MissingFileIsOneLineAndNonZero) {
  expect_one_line_error(run_tool("plan /nonexistent/graph.json"), "/nonexistent/graph.json");
}

TEST(Cli, MalformedJsonIsOneLineAndNonZero) {
  expect_one_line_error(run_tool("plan " + write_temp("bad.json", "{\"nodes\": [")), "bad.json");
}

TEST(Cli, UnknownOpIsOneLineAndNonZero) {
  OpGraph g;
  testing_fakes::build_relu(g);
  std::string json = g.serialize().value();
  auto at = json.find("\"pointwise\"");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 11, "\"no_such_op\"");
  expect_one_line_error(run_tool("plan " + write_temp("unknown_op.json", json)), "no_such_op");
}

TEST(Cli, InvalidGraphIsOneLineAndNonZero) {
  OpGraph g;
  g.set_name("bad_k");
  auto a = g.tensor({1, 4, 8}, DataType::FLOAT, "A");
  auto b = g.tensor({1, 8, 4}, DataType::FLOAT, "B");
  g.matmul(a, b)->set_output(true).set_name("C");
  std::string json = g.serialize().value();
  auto at = json.find("[1,8,4]");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 7, "[1,9,4]");  // K of B no longer matches A's
  expect_one_line_error(run_tool("run " + write_temp("bad_k.json", json)), "not a valid graph");
}

TEST(Cli, BadPlanIndexAndUnknownCommand) {
  OpGraph g;
  testing_fakes::build_matmul(g);
  std::string path = write_temp("mm_bad_plan.json", g.serialize().value());
  expect_one_line_error(run_tool("run " + path + " --plan 99"), "99");
  expect_one_line_error(run_tool("run " + path + " --plan x"), "--plan");
  expect_one_line_error(run_tool("frobnicate"), "frobnicate");
}

// `opgraph --help` and `opgraph <command> --help`: the usage on stdout, nothing on
// stderr, exit 0, and no work done (help wins over a missing graph file).
TEST(Cli, EveryCommandHasHelp) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "usage: opgraph <command>"},        {"info ", "usage: opgraph info"},
      {"plan ", "usage: opgraph plan GRAPH.json"}, {"run ", "usage: opgraph run GRAPH.json"},
      {"graph ", "usage: opgraph graph GRAPH.json"}, {"cache ", "usage: opgraph cache <subcommand>"},
      {"cache warm ", "usage: opgraph cache <subcommand>"},
      {"run /nonexistent/graph.json ", "usage: opgraph run GRAPH.json"},
  };
  for (const auto& [cmd, usage] : cases) {
    for (const char* flag : {"--help", "-h"}) {
      const std::string args = cmd + flag;
      ToolRun r = run_tool(args);
      EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
      EXPECT_TRUE(r.err.empty()) << args << ": " << r.err;
      EXPECT_EQ(r.out.rfind(usage, 0), 0u) << args << ": " << r.out;
    }
  }
}

TEST(Cli, PlanListsTheReferenceForAGraph) {
  OpGraph g;
  testing_fakes::build_matmul(g);
  std::string path = write_temp("mm.json", g.serialize().value());
  ToolRun r = run_tool("plan " + path + " --modes A,FALLBACK");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("reference[]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("20000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" notes\n"), std::string::npos) << r.out;  // the notes column (the reference: "-")
}

TEST(Cli, RunComparesWithTheReference) {
  OpGraph g;
  testing_fakes::build_matmul(g);
  std::string path = write_temp("mm_run.json", g.serialize().value());
  ToolRun r = run_tool("run " + path + " --iters 2 --seed 7");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Without a GPU the plan is the reference itself: nothing to compare with.
  EXPECT_NE(r.out.find("no second engine to compare with"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output 'C' [1, 4, 4] FLOAT: not compared"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("max_abs_err"), std::string::npos) << r.out;
  ToolRun replay = run_tool("run " + path + " --engine 20000");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  expect_one_line_error(run_tool("run " + path + " --engine 20000 --knobs TILE_M=64"), "TILE_M");
}


// --- `opgraph run` and sizes: the cap, checked layout arithmetic, no aborts ---

// relu(X) -> Y with X declared by `dims` / `strides` (Y packed).
std::string relu_graph(const std::string& file, std::vector<std::int64_t> dims, std::vector<std::int64_t> strides,
                       const std::string& x_name = "X") {
  OpGraph g;
  g.set_name("big").set_io_data_type(DataType::FLOAT).set_compute_data_type(DataType::FLOAT);
  auto x = g.tensor(std::move(dims), DataType::FLOAT, x_name, std::move(strides));
  g.relu(x)->set_output(true).set_name("Y");
  auto json = g.serialize();
  EXPECT_TRUE(json.is_good()) << json.status().to_string();
  return write_temp(file, json.is_good() ? json.value() : "");
}

// The tool's exit, output and peak resident memory (KiB; the tool and its shell).
struct MeasuredRun {
  ToolRun run;
  long max_rss_kib = -1;
};

MeasuredRun run_tool_measured(const std::string& args) {
  static int n = 0;
  std::string base = ::testing::TempDir() + "/opgraph_cli_rss_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
  std::string cmd = std::string(OPGRAPH_TOOL_PATH) + " " + args + " >" + base + ".out 2>" + base + ".err";
  MeasuredRun m;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (pid > 0 && ::wait4(pid, &status, 0, &ru) == pid) {
    m.run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    m.max_rss_kib = ru.ru_maxrss;  // the child and the descendants it waited for
  }
  m.run.out = slurp(base + ".out");
  m.run.err = slurp(base + ".err");
  return m;
}

constexpr std::int64_t kTwo24 = std::int64_t{1} << 24;
constexpr std::int64_t kTwo40 = std::int64_t{1} << 40;

// 2^48 elements: `plan` accepts it; `run` used to die in std::bad_alloc (SIGABRT).
TEST(CliRunCap, ElementsOverTheDefaultCapAreRefusedBeforeAllocating) {
  std::string path = relu_graph("relu_2e48.json", {kTwo24, kTwo24}, {});
  ToolRun plan = run_tool("plan " + path);
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  ToolRun r = run_tool("run " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line_error(r, "--max-bytes 1073741824");
  EXPECT_NE(r.err.find("tensor 'X'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1125899906842624 bytes"), std::string::npos) << r.err;  // X alone: 2^48 floats
}

// A stride of 2^40 spans 2^40 + 1 elements for two of them: 4 TiB, refused.
TEST(CliRunCap, AHugeStrideIsRefusedBeforeAllocating) {
  ToolRun r = run_tool("run " + relu_graph("relu_stride_2e40.json", {2, 4}, {kTwo40, 1}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line_error(r, "tensor 'X'");
  EXPECT_NE(r.err.find(std::to_string((kTwo40 + 4) * 4) + " bytes"), std::string::npos) << r.err;
}

// Refused with little memory touched: 96 GiB (buffers and the reference's copies)
// against a 256 MiB cap; the peak stays under the cap (sanitizer builds included).
TEST(CliRunCap, NothingIsAllocatedPastTheCap) {
  std::string path = relu_graph("relu_2e32.json", {1 << 16, 1 << 16}, {});
  MeasuredRun m = run_tool_measured("run " + path + " --max-bytes 256M");
  EXPECT_EQ(m.run.exit_code, 1) << m.run.err;
  expect_one_line_error(m.run, "--max-bytes 268435456");
  EXPECT_GT(m.max_rss_kib, 0);
  EXPECT_LT(m.max_rss_kib, 256 * 1024) << "the refused run touched more than the cap";
  std::printf("refused run: peak resident %ld KiB\n", m.max_rss_kib);
}

TEST(CliRunCap, TheCapIsTheSumOfEveryBuffer) {
  OpGraph g;
  testing_fakes::build_matmul(g);
  std::string path = write_temp("mm_cap.json", g.serialize().value());
  // A 128 + B 128 + C 64 bytes, and the reference's float64 copy of the 80 elements.
  ToolRun small = run_tool("run " + path + " --max-bytes 959");
  EXPECT_EQ(small.exit_code, 1) << small.err;
  expect_one_line_error(small, "960 bytes");
  EXPECT_NE(small.err.find("tensor 'A'"), std::string::npos) << small.err;
  ToolRun fits = run_tool("run " + path + " --max-bytes 960");
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
  ToolRun suffix = run_tool("run " + path + " --max-bytes 1M");
  EXPECT_EQ(suffix.exit_code, 0) << suffix.err;
  for (const char* bad : {"x", "-1", "12Q", "99999999999999999999", "20000000T"}) {
    ToolRun r = run_tool("run " + path + " --max-bytes " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    expect_one_line_error(r, "--max-bytes");
  }
}

// (2^64 + 5) / 7: seven of it wrap int64 to 5, so a 24-byte buffer seemed to cover X.
TEST(CliRunOverflow, AWrappingStrideIsAnErrorNotAWrap) {
  const std::int64_t wraps = static_cast<std::int64_t>((~std::uint64_t{0} / 7) + 1);  // (2^64 + 5) / 7
  ASSERT_EQ(static_cast<std::uint64_t>(wraps) * 7, std::uint64_t{5});
  ToolRun r = run_tool("run " + relu_graph("relu_wrap.json", {8}, {wraps}));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_one_line_error(r, "tensor 'X'");
  EXPECT_NE(r.err.find("overflow"), std::string::npos) << r.err;
}

#if defined(__SANITIZE_ADDRESS__)
#define OPGRAPH_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPGRAPH_TEST_UNDER_ASAN 1
#endif
#endif

// An allocation that fails anyway (a cap raised past what the machine has: 1 PiB,
// beyond any address space) is one line and exit 1, never std::terminate.
TEST(CliRunOverflow, AFailedAllocationIsOneLineNotAnAbort) {
#ifdef OPGRAPH_TEST_UNDER_ASAN
  GTEST_SKIP() << "ASan's operator new reports and aborts instead of throwing std::bad_alloc";
#endif
  std::string path = relu_graph("relu_2e48_nocap.json", {kTwo24, kTwo24}, {});
  ToolRun oom = run_tool("run " + path + " --max-bytes 4611686018427387904");
  EXPECT_EQ(oom.exit_code, 1) << oom.err;
  expect_one_line_error(oom, "out of memory");
}

// Names, paths and flags from the user are cut to a sane length in an error line.
TEST(CliErrors, EchoedStringsAreCut) {
  const std::string long_name(5000, 'n');
  const std::int64_t wraps = static_cast<std::int64_t>((~std::uint64_t{0} / 7) + 1);
  // Whoever words the error (the tool's layout check or the library's validation),
  // the name is cut and the rest of the line, the rule, still shows.
  ToolRun name = run_tool("run " + relu_graph("relu_long_name.json", {8}, {wraps}, long_name));
  expect_one_line_error(name, "...");
  EXPECT_NE(name.err.find("overflow"), std::string::npos) << name.err;
  EXPECT_LT(name.err.size(), 600u) << name.err.size();
  ToolRun flag = run_tool("run x.json --" + std::string(5000, 'f'));
  EXPECT_EQ(flag.exit_code, 2);
  expect_one_line_error(flag, "...");
  EXPECT_LT(flag.err.size(), 400u);
  ToolRun path = run_tool("plan /nonexistent/" + std::string(5000, 'p') + ".json");
  expect_one_line_error(path, "...");
  EXPECT_LT(path.err.size(), 400u);
  ToolRun cmd = run_tool(std::string(5000, 'c'));
  expect_one_line_error(cmd, "...");
  EXPECT_LT(cmd.err.size(), 400u);
}

}  // namespace
}  // namespace opgraph
#endif
