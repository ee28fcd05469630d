// Utilities: npy round trip, atomic writes, statistics, SHA-256 helper, thread pool.
#include <gtest/gtest.h>

#include <hwy/detect_targets.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <jpeglib.h>
#include <sched.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"
#include "util/cpu_features.hpp"
#include "util/cpu_grant.hpp"
#include "util/file_io.hpp"
#include "util/thread_pool.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/stats.hpp"

namespace vinfer::test {

std::vector<std::uint8_t> read_bytes(const std::string& name) {
  std::vector<std::uint8_t> bytes;
  std::FILE* fp = std::fopen(data_path(name).c_str(), "rb");
  if (!fp) return bytes;
  for (int ch; (ch = std::fgetc(fp)) != EOF;) bytes.push_back(static_cast<std::uint8_t>(ch));
  std::fclose(fp);
  return bytes;
}

std::vector<std::uint8_t> encode_jpeg(int w, int h, int sampling, bool progressive, int restart_mcus,
                                      int quality) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* mem = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &mem, &size);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  c.restart_interval = static_cast<unsigned>(restart_mcus);
  c.comp_info[0].h_samp_factor = sampling ? 2 : 1;
  c.comp_info[0].v_samp_factor = sampling == 1 ? 2 : 1;
  if (progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  std::vector<std::uint8_t> row(static_cast<std::size_t>(w) * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {  // smooth colour ramps plus texture, so the chroma varies
      row[3 * x] = static_cast<std::uint8_t>((x * 255) / w ^ (y & 16 ? 0x20 : 0));
      row[3 * x + 1] = static_cast<std::uint8_t>((y * 255) / h);
      row[3 * x + 2] = static_cast<std::uint8_t>(((x + y) * 7) & 255);
    }
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<std::uint8_t> out(mem, mem + size);
  std::free(mem);
  return out;
}

// Compact SHA-256 (FIPS 180-4) used to compare large outputs with committed digests.
std::string sha256_hex(const void* data, std::size_t size) {
  static const std::uint32_t k[64] = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
      0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
      0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
      0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
      0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
      0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
      0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::vector<std::uint8_t> m(static_cast<const std::uint8_t*>(data), static_cast<const std::uint8_t*>(data) + size);
  const std::uint64_t bits = static_cast<std::uint64_t>(size) * 8;
  m.push_back(0x80);
  while (m.size() % 64 != 56) m.push_back(0);
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<std::uint8_t>(bits >> (i * 8)));
  auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (std::size_t off = 0; off < m.size(); off += 64) {
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = (m[off + 4 * i] << 24) | (m[off + 4 * i + 1] << 16) | (m[off + 4 * i + 2] << 8) | m[off + 4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
  }
  char out[65];
  for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return out;
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Npy, RoundTripFloatAndU8) {
  const auto dir = std::filesystem::temp_directory_path() / "vinfer_test_npy";
  std::filesystem::create_directories(dir);
  const std::string p = (dir / "a.npy").string();
  const std::vector<float> v = {1.5f, -2.f, 3.25f, 0.f, 1e-7f, 65504.f};
  write_npy(p, v.data(), {2, 3});
  std::vector<float> back;
  EXPECT_EQ(read_npy(p, back), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(back, v);
  const std::vector<std::uint8_t> u = {0, 7, 255};
  write_npy(p, u.data(), {3});
  EXPECT_EQ(read_npy(p, back), (std::vector<std::size_t>{3}));
  EXPECT_EQ(back, (std::vector<float>{0.f, 7.f, 255.f}));
  // The header is 64-byte aligned, as numpy writes it.
  std::FILE* f = std::fopen(p.c_str(), "rb");
  std::uint8_t hdr[10];
  ASSERT_EQ(std::fread(hdr, 1, 10, f), 10u);
  std::fclose(f);
  EXPECT_EQ((10 + (hdr[8] | (hdr[9] << 8))) % 64, 0);
  std::filesystem::remove_all(dir);
}

TEST(AtomicWrite, FailureLeavesNoFile) {
  const auto dir = std::filesystem::temp_directory_path() / "vinfer_test_atomic";
  std::filesystem::create_directories(dir);
  const std::string p = (dir / "out.bin").string();
  EXPECT_THROW(detail::write_file_atomic(p, [](std::FILE* f) {
                 std::fputs("partial", f);
                 throw Error(ErrorKind::Io, "simulated failure");
               }),
               Error);
  EXPECT_FALSE(std::filesystem::exists(p));
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // no temporary left behind either
  detail::write_file_atomic(p, [](std::FILE* f) { std::fputs("ok", f); });
  EXPECT_EQ(std::filesystem::file_size(p), 2u);
  std::filesystem::remove_all(dir);
}

// Weights are read from the model file after it was parsed: a file that
// shrinks in between (rewritten while loading) gives an error, not a crash
// or stale bytes.
TEST(InputFile, ShrunkFileIsAClearError) {
  const auto dir = std::filesystem::temp_directory_path() / ("vinfer_test_shrink_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string p = (dir / "m.bin").string();
  detail::write_file_atomic(p, [](std::FILE* f) {
    for (int i = 0; i < 1000; ++i) std::fputc(i % 251, f);
  });
  const detail::InputFile file(p, 1 << 20);
  EXPECT_EQ(file.size(), 1000u);
  std::vector<unsigned char> buf(200);
  file.read_at(700, buf.data(), buf.size());
  EXPECT_EQ(buf[0], 700 % 251);
  std::filesystem::resize_file(p, 100);
  try {
    file.read_at(50, buf.data(), buf.size());
    ADD_FAILURE() << "a read past the shrunk end succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_NE(std::string(e.what()).find("changed while it was read"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(Stats, PercentilesInterpolateLikeNumpy) {
  const LatencySummary s = summarize({4, 1, 3, 2, 5});
  EXPECT_DOUBLE_EQ(s.p50, 3);
  EXPECT_DOUBLE_EQ(s.p90, 4.6);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_EQ(summarize({}).count, 0u);
}

TEST(ThreadPool, CoversRangeOnceAndPropagatesErrors) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> hits(1000);
    detail::parallel_for(1000, threads, [&](int b, int e) {
      for (int i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
  EXPECT_THROW(detail::parallel_for(10, 2, [](int b, int) {
                 if (b > 0) throw Error(ErrorKind::Internal, "boom");
               }),
               Error);
}

// A region started from inside a chunk (a two-thread decode called from a
// parallel resize, say) runs its chunks in order instead of waiting forever
// for the pool, which runs one region at a time.
TEST(ThreadPool, NestedRegionRunsInline) {
  std::vector<std::atomic<int>> hits(64);
  detail::parallel_for(4, 2, [&](int b, int e) {
    for (int i = b; i < e; ++i)
      detail::parallel_for(16, 2, [&](int ib, int ie) {
        for (int j = ib; j < ie; ++j) hits[static_cast<std::size_t>(i * 16 + j)]++;
      });
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

// VINFER_ISA caps the level at what it names, never above what the CPU has,
// and Highway's dispatch follows (the suite runs at each level: tests/CMakeLists.txt).
TEST(CpuFeatures, VinferIsaCapsTheLevel) {
  using detail::IsaLevel;
  const detail::CpuFeatures& f = detail::cpu_features();
  const char* env = std::getenv("VINFER_ISA");
  IsaLevel want = f.detected;
  if (env && std::strcmp(env, "plain") == 0) want = IsaLevel::Plain;
  if (env && std::strcmp(env, "avx2") == 0) want = IsaLevel::Avx2;
  EXPECT_EQ(f.level, std::min(want, f.detected)) << "VINFER_ISA=" << (env ? env : "");
  EXPECT_EQ(f.avx2, f.level >= IsaLevel::Avx2);
  EXPECT_EQ(f.avx512, f.level >= IsaLevel::Avx512);
  if (f.avx512_vnni) EXPECT_TRUE(f.avx512);
  // Highway's code follows the level (a larger target bit is a lesser target).
  const std::int64_t target = detail::hwy_target();
  if (f.level < IsaLevel::Avx512) EXPECT_GT(target, static_cast<std::int64_t>(HWY_AVX3));
  if (f.level < IsaLevel::Avx2) EXPECT_GT(target, static_cast<std::int64_t>(HWY_AVX2));
  if (f.level == IsaLevel::Avx512) EXPECT_EQ(target, static_cast<std::int64_t>(HWY_AVX3));
  std::fprintf(stderr, "ISA level %s (the CPU has %s)\n", detail::to_string(f.level), detail::to_string(f.detected));
}

}  // namespace vinfer::test

namespace vinfer::detail {
namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(CpuGrant, CgroupV2Quota) {
  const auto root = std::filesystem::temp_directory_path() / ("vinfer_cg2_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const std::string self = "0::/kube/pod\n";
  EXPECT_EQ(cgroup_cpu_quota(root.string(), self), 0);  // no files: no quota
  write_file(root / "kube/pod/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota(root.string(), self), 0);  // unlimited
  write_file(root / "kube/cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_quota(root.string(), self), 1.5);  // a parent's
  write_file(root / "kube/pod/cpu.max", "50000 100000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_quota(root.string(), self), 0.5);  // the smallest along the path
  write_file(root / "cpu.max", "garbage");
  EXPECT_DOUBLE_EQ(cgroup_cpu_quota(root.string(), self), 0.5);
  write_file(root / "cpu.max", "20000 100000");  // a container's own root (its cgroup namespace: "0::/")
  EXPECT_DOUBLE_EQ(cgroup_cpu_quota(root.string(), "0::/\n"), 0.2);
  std::filesystem::remove_all(root);
}

TEST(CpuGrant, CgroupV1Quota) {
  const auto root = std::filesystem::temp_directory_path() / ("vinfer_cg1_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const std::string self = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n";
  write_file(root / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
  write_file(root / "cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota(root.string(), self), 0);
  write_file(root / "cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "200000\n");
  EXPECT_DOUBLE_EQ(cgroup_cpu_quota(root.string(), self), 2.0);
  EXPECT_EQ(cgroup_cpu_quota(root.string(), "12:memory:/docker/abc\n"), 0);  // no cpu controller named
  std::filesystem::remove_all(root);
}

TEST(CpuGrant, TheSmallerOfAffinityAndQuota) {
  EXPECT_EQ(grant_of(8, 8, 0).cpus, 8);
  EXPECT_EQ(grant_of(8, 3, 0).cpus, 3);
  EXPECT_EQ(grant_of(8, 8, 1.5).cpus, 2);  // a part of a CPU is a thread's worth
  EXPECT_EQ(grant_of(2, 2, 0.5).cpus, 1);
  EXPECT_EQ(grant_of(2, 2, 1.0).cpus, 1);
  EXPECT_EQ(grant_of(4, 2, 3.0).cpus, 2);
  EXPECT_NE(grant_of(2, 2, 1.0).why().find("quota 1.00"), std::string::npos);
}

// The process restricted to one CPU (as taskset does): the grant follows.
TEST(CpuGrant, FollowsTheAffinityMask) {
  cpu_set_t old;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &old)) first = c;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const CpuGrant g = read_cpu_grant();
  sched_setaffinity(0, sizeof old, &old);
  EXPECT_EQ(g.affinity, 1);
  EXPECT_EQ(g.cpus, 1);
  EXPECT_EQ(read_cpu_grant().affinity, CPU_COUNT(&old));
}

}  // namespace
}  // namespace vinfer::detail

namespace vinfer::detail {
namespace {

using Jiffies = std::pair<std::uint64_t, std::uint64_t>;

TEST(IdleMeter, SumsTheGrantedCpusIdleAndIowait) {
  const std::string stat =
      "cpu  100 0 50 1000 10 0 0 0 0 0\n"
      "cpu0 10 1 5 300 4 1 1 2 0 0\n"
      "cpu1 90 0 45 700 6 0 0 0 0 0\n"
      "cpu12 7 0 0 9 0 0 0 0 0 0\n"
      "intr 1 2 3\n";
  EXPECT_EQ(IdleMeter::jiffies(stat, {0}), Jiffies(304, 324));
  EXPECT_EQ(IdleMeter::jiffies(stat, {0, 1}), Jiffies(1010, 1165));
  EXPECT_EQ(IdleMeter::jiffies(stat, {1, 2}), Jiffies(706, 841));
  EXPECT_EQ(IdleMeter::jiffies(stat, {12}), Jiffies(9, 16)) << "cpu12 is not cpu1";
  EXPECT_EQ(IdleMeter::jiffies("", {0}), Jiffies(0, 0));
}

TEST(IdleMeter, FirstCallUnknownThenASpan) {
  IdleMeter m;
  EXPECT_LT(m.idle_cpus(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const double idle = m.idle_cpus();
  EXPECT_GE(idle, 0) << "60 ms of jiffies have passed";
  EXPECT_LE(idle, static_cast<double>(read_cpu_grant().affinity) + 1e-9);
}

}  // namespace
}  // namespace vinfer::detail
