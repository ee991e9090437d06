// relax: the public surface in one include: everything a program needs to build, transform,
// compile and run models, every pass factory a user can name included.
//
//   #include <relax/relax.h>
//
// Layers (docs/architecture.md): support (DataType, Device, Target), shape (SymExpr,
// Analyzer), ir (StructInfo, expressions, PrimFuncs, builders, operators, the compute library,
// text and JSON forms), transform (passes and their factories, patterns, library dispatch,
// schedules, memory plans, pipelines), codegen (relax::build) and the runtime (Tensor, Module,
// load_module, execution contexts, weights files, the KV cache, threads, the oneDNN and CUDA
// libraries). A program that only loads AOT libraries needs just <relax/runtime/module.h> and
// the relax::runtime library.
//
// Not included here, each a header of its own that a program includes explicitly:
//   - the model library: relax/models/llama.h (configs and module builders),
//     relax/models/llama_model.h (a compiled model bound to its weights),
//     relax/models/llama_reference.h (the plain C++ reference decoder);
//   - relax/ir/testing.h: GoogleTest helpers (it needs GoogleTest);
//   - the code generator's stages, which relax::build runs in order: relax/codegen/
//     vm_codegen.h (VM bytecode), cpp_codegen.h (C++ kernels), cuda_codegen.h (CUDA kernels),
//     compiler.h (the host compiler driver and JIT cache);
//   - what relax uses inside itself or copies into generated code: the kernel ABI
//     (relax/runtime/kernel_abi.h), library-file integrity (relax/runtime/library_file.h),
//     reductions over empty loops (relax/ir/empty_reduction.h), and the support headers
//     check.h, fnv1a.h, half_float.h, int_math.h, kernel_math.h and micro_kernels.h.
#pragma once

#include "relax/support/cpu_features.h"
#include "relax/support/data_type.h"
#include "relax/support/device.h"
#include "relax/support/dtype_util.h"
#include "relax/support/float_format.h"
#include "relax/support/limits.h"
#include "relax/support/source_location.h"
#include "relax/support/target.h"

#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/iter_map.h"
#include "relax/shape/solve.h"
#include "relax/shape/sym_expr.h"
#include "relax/shape/sym_expr_search.h"
#include "relax/shape/sym_kind.h"

#include "relax/ir/builder.h"
#include "relax/ir/compute.h"
#include "relax/ir/expr.h"
#include "relax/ir/functor.h"
#include "relax/ir/json.h"
#include "relax/ir/kernel_checks.h"
#include "relax/ir/kernel_table.h"
#include "relax/ir/micro_kernel.h"
#include "relax/ir/module.h"
#include "relax/ir/normalize.h"
#include "relax/ir/op.h"
#include "relax/ir/ops.h"
#include "relax/ir/parser.h"
#include "relax/ir/prim_func.h"
#include "relax/ir/prim_func_builder.h"
#include "relax/ir/printer.h"
#include "relax/ir/struct_info.h"
#include "relax/ir/structural_equal.h"
#include "relax/ir/visitor.h"
#include "relax/ir/well_formed.h"

#include "relax/transform/builtin_passes.h"
#include "relax/transform/dispatch_library.h"
#include "relax/transform/instrument.h"
#include "relax/transform/legalize_ops.h"
#include "relax/transform/memory_planner.h"
#include "relax/transform/op_pattern.h"
#include "relax/transform/opt.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/passes.h"
#include "relax/transform/pattern.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/plan_memory.h"
#include "relax/transform/prim_eval.h"
#include "relax/transform/schedule.h"

#include "relax/codegen/build.h"

#include "relax/runtime/allocator.h"
#include "relax/runtime/bound_weights.h"
#include "relax/runtime/cuda.h"
#include "relax/runtime/cuda_library.h"
#include "relax/runtime/cuda_library_call.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/execution_context.h"
#include "relax/runtime/kernel_library.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/library_call.h"
#include "relax/runtime/module.h"
#include "relax/runtime/npy.h"
#include "relax/runtime/onednn.h"
#include "relax/runtime/onednn_call.h"
#include "relax/runtime/quantize.h"
#include "relax/runtime/replay.h"
#include "relax/runtime/safetensors.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/thread_budget.h"
#include "relax/runtime/thread_pool.h"
#include "relax/runtime/value.h"
