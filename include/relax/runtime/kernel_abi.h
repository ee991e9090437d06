/* The C calling convention between the VM and compiled kernels.
 *
 * Every kernel that relax generates (and every shared object it writes, JIT
 * or AOT) follows this ABI, so that the runtime can call kernels it did not
 * compile in this process. The header is C so that generated sources can
 * carry an identical copy of these declarations without including anything
 * (a test checks that the copy and this file agree).
 *
 * A kernel receives its arguments as an array of RelaxKernelArg in the order
 * of its PrimFunc parameters: buffers (inputs and destinations alike) and
 * scalars. It checks what it relies on (argument count, kinds, ranks, dtypes,
 * dims against the relations of its parameter shapes), writes a message of
 * at most `error_capacity` bytes (NUL included) into `error` and returns
 * non-zero on a mismatch; it returns 0 after computing. The message says what
 * is wrong ("argument C (#2) dim 1 is 5, expected 4") without naming the
 * kernel: the caller knows which kernel it called and adds that context once
 * (the VM reports "main: kernel add: argument C (#2) dim 1 is 5, expected 4").
 *
 * A shared object made by relax exports (extern "C", found with dlsym):
 *   int32_t relax_abi_version(void);                 returns RELAX_KERNEL_ABI_VERSION
 *   const RelaxKernelEntry* relax_kernels(int32_t* count);    the kernel table
 * and, when it is an AOT library, also
 *   const uint8_t* relax_executable(uint64_t* size);  the serialised Executable
 * A library may also export (relax's code generator always does):
 *   const char relax_isa_level[];     the ISA level its target named ("x86-64-v3",
 *                                     "native", ...; "" when none), for messages
 *   const char relax_isa_features[];  the CPU features its code may use, names of
 *                                     relax/support/cpu_features.h separated by spaces
 *   void relax_set_runtime_api(const RelaxRuntimeApi* api);  see below
 * The loader reads the two ISA strings as data, before running any code of the
 * library, and refuses the library when this CPU lacks one of the features.
 * It then calls relax_set_runtime_api (when exported) before any kernel runs,
 * with a table that outlives the library.
 *
 * Threads. A kernel's parallel loop is an outlined body that the runtime runs
 * on its one pool of worker threads per process (parallel_for), the calling
 * thread included; the pool's teams draw their threads from one budget, so the
 * kernels of all concurrent calls share the cores instead of each forking a
 * team of its own. Kernels therefore need no OpenMP runtime (only `omp simd`
 * pragmas, which -fopenmp-simd compiles). claim_threads/release_threads give
 * other code that starts threads of its own (oneDNN's OpenMP teams) a share of
 * the same budget. Version 2 added the ISA record and the table; version 3
 * added parallel_for (version 2 libraries fork OpenMP teams of their own and
 * are refused: rebuild them); version 4 added cuda_launch; version 5 added
 * thread_scratch (libraries keep no per-thread state of their own: a
 * library is dlclose'd while the pool's threads live on).
 *
 * CUDA. A kernel of the cuda target is a host-side launcher with the same
 * signature as any kernel: it checks its arguments (whose data pointers are
 * device pointers), computes its grids from their dims and launches its
 * device functions, in order, through cuda_launch. The device code is one
 * image (a cubin, or NUL-terminated PTX text) that the library carries as
 * data; the runtime loads it into the device's context on first use, keyed by
 * the image's address, and launches on the stream of the call in progress (a
 * CUDA graph capture records the launches instead). A runtime without CUDA
 * support passes a null cuda_launch: a CUDA kernel then fails with a message.
 */
#ifndef RELAX_RUNTIME_KERNEL_ABI_H_
#define RELAX_RUNTIME_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RELAX_KERNEL_ABI_VERSION 5

/* What a RelaxKernelArg holds. */
enum {
  RELAX_ARG_BUFFER = 0, /* data, shape, strides, ndim, dtype_* */
  RELAX_ARG_INT = 1,    /* int_value */
  RELAX_ARG_FLOAT = 2   /* float_value */
};

typedef struct RelaxKernelArg {
  int32_t kind;
  int32_t ndim;
  uint8_t dtype_code; /* DLPack's DLDataTypeCode */
  uint8_t dtype_bits;
  uint16_t dtype_lanes;
  void* data;
  const int64_t* shape;   /* ndim entries */
  const int64_t* strides; /* ndim entries, in elements; NULL: compact row-major */
  int64_t int_value;
  double float_value;
} RelaxKernelArg;

typedef int32_t (*RelaxKernelFn)(const RelaxKernelArg* args, int32_t num_args, char* error,
                                 int32_t error_capacity);

typedef struct RelaxKernelEntry {
  const char* name; /* the PrimFunc's name in the IRModule */
  RelaxKernelFn fn;
} RelaxKernelEntry;

/* One chunk [lo, hi) of a parallel loop; returns 0, or non-zero when it failed
 * (the chunks not yet started are then skipped). Must not throw. */
typedef int32_t (*RelaxParallelBodyFn)(void* ctx, int64_t lo, int64_t hi);

/* The runtime's services to kernels (see "Threads" above). */
typedef struct RelaxRuntimeApi {
  /* Threads for code that runs a team of its own (a hand-written kernel's
   * OpenMP loop), the calling thread included: between 1 and `wanted` (0: as
   * many as the budget allows); 1 when the budget has no team free. Never
   * waits. Generated kernels use parallel_for instead. */
  int32_t (*claim_threads)(int32_t wanted);
  /* Gives back `granted`, what claim_threads returned, after the team ran. */
  void (*release_threads)(int32_t granted);
  /* Runs body(ctx, lo, hi) over [begin, end) cut into static chunks, one per
   * thread of a team of at most `wanted` threads (0: as many as the budget
   * allows) of the runtime's pool, the calling thread included, and returns
   * when every chunk is done: 0, or the first non-zero value a chunk returned.
   * A call from inside a body, or one that finds no team free in the budget,
   * runs the whole range on the calling thread. */
  int32_t (*parallel_for)(int64_t begin, int64_t end, int32_t wanted, RelaxParallelBodyFn body,
                          void* ctx);
  /* Launches the device function `name` of the CUDA image `image` (`image_size`
   * bytes at an address that stays valid while the library is loaded) with the
   * grid and block dimensions and dynamic shared memory given and `params` as
   * the kernel's parameters (cuLaunchKernel's kernelParams: one pointer to each
   * parameter's value). Returns 0, or non-zero after writing a message of at
   * most `error_capacity` bytes into `error` (no driver or device, an image the
   * device cannot run, a launch error). Null in a runtime built without CUDA. */
  int32_t (*cuda_launch)(const void* image, uint64_t image_size, const char* name,
                         const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                         void** params, char* error, int32_t error_capacity);
  /* Scratch memory of the calling thread: at least `bytes` bytes, 64-byte
   * aligned, valid until the same thread's next call of thread_scratch (the
   * runtime keeps the largest block a thread asked for and frees it when the
   * thread ends); null when it cannot be allocated. For micro-kernels that
   * need a work area per call (relax/support/micro_kernels.h). */
  void* (*thread_scratch)(uint64_t bytes);
} RelaxRuntimeApi;

typedef int32_t (*RelaxAbiVersionFn)(void);
typedef void (*RelaxSetRuntimeApiFn)(const RelaxRuntimeApi* api);
typedef const RelaxKernelEntry* (*RelaxKernelTableFn)(int32_t* count);
typedef const uint8_t* (*RelaxExecutableFn)(uint64_t* size);

#ifdef __cplusplus
}
#endif

#endif /* RELAX_RUNTIME_KERNEL_ABI_H_ */
