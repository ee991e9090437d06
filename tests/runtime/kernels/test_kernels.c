/* Hand-written kernels for relax_runtime_tests, following kernel_abi.h the way
 * generated kernels do: each checks its argument count, kinds, ranks, dtypes
 * and shapes, writes a message into `error` (without naming the kernel: the
 * caller adds that) and returns non-zero on a mismatch, else computes and
 * returns 0.
 *
 *   add_kernel(a, b, out)        float32 buffers of one shape: out = a + b
 *   scale_kernel(x, s, out)      float32 buffers, s FLOAT:      out = x * s
 *   add_int_kernel(x, k, out)    int64 buffers, k INT:          out = x + k
 *   fail_kernel(...)             always fails with a message longer than the buffer
 *   silent_fail_kernel(...)      always fails with code 3 and no message
 *
 * Buffers must be compact (strides NULL or the compact ones). */
#include <stdio.h>
#include <string.h>

#include "relax/runtime/kernel_abi.h"

enum { kDLInt = 0, kDLFloat = 2 };

static int64_t numel(const RelaxKernelArg* a) {
  int64_t n = 1;
  for (int32_t i = 0; i < a->ndim; ++i) n *= a->shape[i];
  return n;
}

static int is_compact(const RelaxKernelArg* a) {
  int64_t expected = 1;
  if (a->strides == NULL) return 1;
  for (int32_t i = a->ndim - 1; i >= 0; --i) {
    if (a->shape[i] != 1 && a->strides[i] != expected) return 0;
    expected *= a->shape[i];
  }
  return 1;
}

/* Checks that args[index] is a compact buffer of the dtype; 0 when it is. */
static int32_t check_buffer(const RelaxKernelArg* args, int32_t index,
                            uint8_t code, uint8_t bits, char* error, int32_t capacity) {
  const RelaxKernelArg* a = &args[index];
  if (a->kind != RELAX_ARG_BUFFER) {
    snprintf(error, (size_t)capacity, "argument %d must be a buffer (kind %d)", index,
             a->kind);
    return 1;
  }
  if (a->dtype_code != code || a->dtype_bits != bits || a->dtype_lanes != 1) {
    snprintf(error, (size_t)capacity, "argument %d has dtype code %d bits %d, expected code %d bits %d",
             index, a->dtype_code, a->dtype_bits, code, bits);
    return 1;
  }
  if (!is_compact(a)) {
    snprintf(error, (size_t)capacity, "argument %d is not compact", index);
    return 1;
  }
  return 0;
}

static int32_t check_same_shape(const RelaxKernelArg* args, int32_t i, int32_t j,
                                char* error, int32_t capacity) {
  const RelaxKernelArg* a = &args[i];
  const RelaxKernelArg* b = &args[j];
  if (a->ndim != b->ndim) {
    snprintf(error, (size_t)capacity, "arguments %d and %d have ranks %d and %d", i, j,
             a->ndim, b->ndim);
    return 1;
  }
  for (int32_t d = 0; d < a->ndim; ++d) {
    if (a->shape[d] != b->shape[d]) {
      snprintf(error, (size_t)capacity, "dim %d of arguments %d and %d differ: %lld vs %lld",
               d, i, j, (long long)a->shape[d], (long long)b->shape[d]);
      return 1;
    }
  }
  return 0;
}

static int32_t check_count(int32_t num_args, int32_t expected, char* error,
                           int32_t capacity) {
  if (num_args == expected) return 0;
  snprintf(error, (size_t)capacity, "expected %d arguments, got %d", expected, num_args);
  return 1;
}

static int32_t add_kernel(const RelaxKernelArg* args, int32_t num_args, char* error, int32_t capacity) {
  if (check_count(num_args, 3, error, capacity) || check_buffer(args, 0, kDLFloat, 32, error, capacity) ||
      check_buffer(args, 1, kDLFloat, 32, error, capacity) ||
      check_buffer(args, 2, kDLFloat, 32, error, capacity) ||
      check_same_shape(args, 0, 1, error, capacity) || check_same_shape(args, 0, 2, error, capacity)) {
    return 1;
  }
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* out = (float*)args[2].data;
  for (int64_t i = 0, n = numel(&args[0]); i < n; ++i) out[i] = a[i] + b[i];
  return 0;
}

static int32_t scale_kernel(const RelaxKernelArg* args, int32_t num_args, char* error, int32_t capacity) {
  if (check_count(num_args, 3, error, capacity) || check_buffer(args, 0, kDLFloat, 32, error, capacity) ||
      check_buffer(args, 2, kDLFloat, 32, error, capacity) ||
      check_same_shape(args, 0, 2, error, capacity)) {
    return 1;
  }
  if (args[1].kind != RELAX_ARG_FLOAT) {
    snprintf(error, (size_t)capacity, "argument 1 must be a float (kind %d)", args[1].kind);
    return 1;
  }
  const float* x = (const float*)args[0].data;
  float* out = (float*)args[2].data;
  const float s = (float)args[1].float_value;
  for (int64_t i = 0, n = numel(&args[0]); i < n; ++i) out[i] = x[i] * s;
  return 0;
}

static int32_t add_int_kernel(const RelaxKernelArg* args, int32_t num_args, char* error,
                              int32_t capacity) {
  if (check_count(num_args, 3, error, capacity) || check_buffer(args, 0, kDLInt, 64, error, capacity) ||
      check_buffer(args, 2, kDLInt, 64, error, capacity) ||
      check_same_shape(args, 0, 2, error, capacity)) {
    return 1;
  }
  if (args[1].kind != RELAX_ARG_INT) {
    snprintf(error, (size_t)capacity, "argument 1 must be an int (kind %d)", args[1].kind);
    return 1;
  }
  const int64_t* x = (const int64_t*)args[0].data;
  int64_t* out = (int64_t*)args[2].data;
  for (int64_t i = 0, n = numel(&args[0]); i < n; ++i) out[i] = x[i] + args[1].int_value;
  return 0;
}

static int32_t fail_kernel(const RelaxKernelArg* args, int32_t num_args, char* error, int32_t capacity) {
  (void)args;
  char message[1024];
  memset(message, 'x', sizeof message - 1);
  message[sizeof message - 1] = '\0';
  memcpy(message, "deliberate failure with 1023 bytes: ", 36);
  snprintf(error, (size_t)capacity, "%s (%d arguments)", message, num_args);
  return 7;
}

static int32_t silent_fail_kernel(const RelaxKernelArg* args, int32_t num_args, char* error,
                                  int32_t capacity) {
  (void)args;
  (void)num_args;
  (void)error;
  (void)capacity;
  return 3;
}

static const RelaxKernelEntry kKernels[] = {
    {"add_kernel", add_kernel},
    {"scale_kernel", scale_kernel},
    {"add_int_kernel", add_int_kernel},
    {"fail_kernel", fail_kernel},
    {"silent_fail_kernel", silent_fail_kernel},
};

int32_t relax_abi_version(void) { return RELAX_KERNEL_ABI_VERSION; }

const RelaxKernelEntry* relax_kernels(int32_t* count) {
  *count = (int32_t)(sizeof kKernels / sizeof kKernels[0]);
  return kKernels;
}
