// relax: the public surface in one include.
//
//   #include <relax/relax.h>
//
// Layers (see README.md): support (DataType, Device), shape (SymExpr, Analyzer),
// ir (StructInfo, expressions, PrimFuncs, builders, text and JSON forms),
// transform (passes), codegen (C++ kernels, VM bytecode, relax::build) and the
// runtime (Tensor, Module, load_module). A program that only loads AOT
// libraries needs just <relax/runtime/module.h> and the relax::runtime library.
#pragma once

#include "relax/support/data_type.h"
#include "relax/support/device.h"
#include "relax/support/target.h"

#include "relax/shape/analyzer.h"
#include "relax/shape/buffer.h"
#include "relax/shape/intrinsics.h"
#include "relax/shape/iter_map.h"
#include "relax/shape/solve.h"
#include "relax/shape/sym_expr.h"

#include "relax/ir/builder.h"
#include "relax/ir/expr.h"
#include "relax/ir/functor.h"
#include "relax/ir/json.h"
#include "relax/ir/kernel_table.h"
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

#include "relax/transform/instrument.h"
#include "relax/transform/legalize_ops.h"
#include "relax/transform/opt.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_manager.h"
#include "relax/transform/pass_registry.h"
#include "relax/transform/passes.h"
#include "relax/transform/pattern.h"
#include "relax/transform/pipeline.h"
#include "relax/transform/prim_eval.h"

#include "relax/codegen/build.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/codegen/vm_codegen.h"
#include "relax/models/llama.h"

#include "relax/runtime/allocator.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/kernel_library.h"
#include "relax/runtime/module.h"
#include "relax/runtime/npy.h"
#include "relax/runtime/tensor.h"
#include "relax/runtime/value.h"
