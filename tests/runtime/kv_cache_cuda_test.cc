// "kv_cache.attention" handed CUDA tensors on a machine without a usable GPU (every machine of
// CI): the call is refused with the reason, before any device memory is touched; mixed devices
// are refused by name. The numerics on a device are tests/cuda/kv_cache_device_test.cc's.
#include <gtest/gtest.h>

#include <vector>

#include "relax/runtime/cuda.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/value.h"

namespace relax::runtime {
namespace {

// A tensor that claims to live on cuda:0 at a made-up address: only its metadata may be read.
Tensor kv_cuda_fake(std::vector<int64_t> shape, DataType dtype) {
  static char never_dereferenced[1];
  return Tensor::borrow(never_dereferenced, std::move(shape), dtype, {}, Device::cuda());
}

std::vector<Value> kv_cuda_args(bool k_on_host) {
  const DataType f32 = DataType::float32();
  Tensor k = kv_cuda_fake({1, 1, 2, 8}, f32);
  if (k_on_host) k = *Tensor::empty({1, 1, 2, 8}, f32);
  return {kv_cuda_fake({1, 1, 4, 8}, f32),    k,
          kv_cuda_fake({1, 1, 2, 8}, f32),    kv_cuda_fake({2, 16, 2, 8}, f32),
          kv_cuda_fake({2, 16, 2, 8}, f32),   kv_cuda_fake({2}, DataType::int64()),
          kv_cuda_fake({1}, DataType::int64()), kv_cuda_fake({1, 1, 4, 8}, f32)};
}

TEST(KVCacheAttentionCuda, WithoutADeviceTheCallSaysWhy) {
  if (cuda::available()) GTEST_SKIP() << "this machine has a CUDA device";
  absl::Status s = kv_cache_attention(kv_cuda_args(false));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("kv_cache.attention: argument 5 (lengths): cannot copy to the host"), std::string::npos)
      << s;
}

TEST(KVCacheAttentionCuda, ArgumentsOnTwoDevicesAreRefusedByName) {
  absl::Status s = kv_cache_attention(kv_cuda_args(true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("argument 1 is on cpu but q (argument 0) is on cuda:0"), std::string::npos) << s;
}

TEST(KVCacheAttentionCuda, ACacheOnAGpuNeedsOne) {
  if (cuda::available()) GTEST_SKIP() << "this machine has a CUDA device";
  absl::StatusOr<KVCache> cache = KVCache::create(1, 1, 8, 1, 8, Device::cuda());
  ASSERT_FALSE(cache.ok());
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kFailedPrecondition) << cache.status();
}

}  // namespace
}  // namespace relax::runtime
