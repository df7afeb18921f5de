// tests/plan/test_cli.cpp — the built `opgraph` tool on bad input: one clear line
// on stderr and a non-zero exit; and `opgraph plan` on a real graph file.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

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
  EXPECT_NE(r.out.find("output 'C' [1, 4, 4] FLOAT: max_abs_err 0 max_rel_err 0"), std::string::npos) << r.out;
  ToolRun replay = run_tool("run " + path + " --engine 20000");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  expect_one_line_error(run_tool("run " + path + " --engine 20000 --knobs TILE_M=64"), "TILE_M");
}

}  // namespace
}  // namespace opgraph
#endif
