// runtime/device_buffer.h without a GPU: DeviceBuffer over a driver table of fake
// entry points backed by host memory — allocation size, copies in and out
// through the table (bytes round-trip), bounds refused before any driver call,
// a refused allocation named with its size and never freed, ownership moved
// (every allocation freed exactly once), 0 bytes allocating nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "runtime/device_buffer.h"

using namespace opgraph;

namespace {

// Device memory simulated by host vectors keyed by a fake address.
struct FakeMemory {
  std::map<CUdeviceptr, std::vector<unsigned char>> live;
  std::vector<CUdeviceptr> freed;
  CUdeviceptr next = 0x40000;
  int allocs = 0, copies = 0;
  bool refuse = false;
};
FakeMemory* g_mem = nullptr;

runtime::CudaDriverApi fake_api() {
  runtime::CudaDriverApi a;
  a.mem_alloc = [](CUdeviceptr* p, std::size_t n) -> CUresult {
    ++g_mem->allocs;
    if (g_mem->refuse) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = g_mem->next;
    g_mem->next += n + 256;
    g_mem->live[*p].assign(n, 0);
    return CUDA_SUCCESS;
  };
  a.mem_free = [](CUdeviceptr p) -> CUresult {
    g_mem->freed.push_back(p);
    return g_mem->live.erase(p) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  a.memcpy_htod = [](CUdeviceptr p, const void* src, std::size_t n) -> CUresult {
    ++g_mem->copies;
    auto it = g_mem->live.find(p);
    if (it == g_mem->live.end() || n > it->second.size()) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(it->second.data(), src, n);
    return CUDA_SUCCESS;
  };
  a.memcpy_dtoh = [](void* dst, CUdeviceptr p, std::size_t n) -> CUresult {
    ++g_mem->copies;
    auto it = g_mem->live.find(p);
    if (it == g_mem->live.end() || n > it->second.size()) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(dst, it->second.data(), n);
    return CUDA_SUCCESS;
  };
  return a;
}

class DeviceBufferTest : public ::testing::Test {
 protected:
  void SetUp() override { g_mem = &mem_; }
  void TearDown() override { g_mem = nullptr; }
  FakeMemory mem_;
  runtime::CudaDriverApi api_ = fake_api();
  std::mt19937 rng_{std::random_device{}()};
};

}  // namespace

TEST_F(DeviceBufferTest, AllocatesCopiesBothWaysAndFreesOnce) {
  const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 1 << 16)(rng_);
  std::vector<unsigned char> in(n), out(n, 0);
  for (auto& b : in) b = static_cast<unsigned char>(rng_());
  CUdeviceptr addr = 0;
  {
    DeviceBuffer d(api_, n);
    ASSERT_TRUE(d.status().is_good()) << d.status().message();
    addr = d.ptr();
    ASSERT_NE(addr, 0u);
    EXPECT_EQ(d.data(), reinterpret_cast<void*>(addr));
    EXPECT_EQ(d.bytes(), n);
    ASSERT_EQ(mem_.live.count(addr), 1u);
    EXPECT_EQ(mem_.live[addr].size(), n);
    ASSERT_TRUE(d.upload(in.data(), n).is_good());
    EXPECT_EQ(mem_.live[addr], in);
    ASSERT_TRUE(d.download(out.data(), n).is_good());
    EXPECT_EQ(out, in);
    // Larger than the buffer: refused before the driver is called.
    const int copies = mem_.copies;
    Status big = d.upload(in.data(), n + 1);
    EXPECT_EQ(big.code(), ErrorCode::INVALID_VALUE);
    EXPECT_NE(big.message().find(std::to_string(n + 1)), std::string::npos) << big.message();
    EXPECT_EQ(d.download(out.data(), n + 1).code(), ErrorCode::INVALID_VALUE);
    EXPECT_EQ(mem_.copies, copies);
    EXPECT_TRUE(mem_.freed.empty());
  }
  EXPECT_EQ(mem_.freed, std::vector<CUdeviceptr>{addr});
  EXPECT_TRUE(mem_.live.empty());
}

TEST_F(DeviceBufferTest, RefusedAllocationIsNamedAndNeverFreed) {
  mem_.refuse = true;
  const std::size_t n = std::uniform_int_distribution<std::size_t>(1000, 1 << 20)(rng_);
  {
    DeviceBuffer d(api_, n);
    EXPECT_EQ(d.status().code(), ErrorCode::CUDA_API_FAILED);
    EXPECT_NE(d.status().message().find("cuMemAlloc(" + std::to_string(n) + " bytes)"), std::string::npos)
        << d.status().message();
    EXPECT_EQ(d.ptr(), 0u);
    EXPECT_EQ(d.bytes(), 0u);
  }
  EXPECT_TRUE(mem_.freed.empty());
}

TEST_F(DeviceBufferTest, ZeroBytesAllocateNothing) {
  {
    DeviceBuffer d(api_, 0);
    EXPECT_TRUE(d.status().is_good());
    EXPECT_EQ(d.ptr(), 0u);
    EXPECT_TRUE(d.upload(nullptr, 0).is_good());
  }
  DeviceBuffer empty;
  EXPECT_EQ(empty.ptr(), 0u);
  EXPECT_EQ(mem_.allocs, 0);
  EXPECT_TRUE(mem_.freed.empty());
}

TEST_F(DeviceBufferTest, MovesTransferOwnershipAndEveryAllocationIsFreedOnce) {
  std::vector<CUdeviceptr> made;
  {
    std::vector<DeviceBuffer> v;
    for (int i = 0; i < 20; ++i) {  // growth moves the earlier buffers
      v.emplace_back(api_, std::uniform_int_distribution<std::size_t>(1, 4096)(rng_));
      made.push_back(v.back().ptr());
    }
    DeviceBuffer moved(std::move(v[3]));
    EXPECT_EQ(moved.ptr(), made[3]);
    EXPECT_EQ(v[3].ptr(), 0u);
    // Assigning over a live buffer frees what it held.
    v[5] = std::move(moved);
    EXPECT_EQ(v[5].ptr(), made[3]);
    EXPECT_EQ(mem_.freed, std::vector<CUdeviceptr>{made[5]});
    v[6].reset();
    EXPECT_EQ(v[6].ptr(), 0u);
    EXPECT_EQ(mem_.freed.size(), 2u);
  }
  std::sort(made.begin(), made.end());
  std::sort(mem_.freed.begin(), mem_.freed.end());
  EXPECT_EQ(mem_.freed, made);
  EXPECT_TRUE(mem_.live.empty());
}
