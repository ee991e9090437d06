// relax::build: the pass pipeline → VM bytecode → C++ kernels → shared object → Module.
// The steps and their order are described in relax/codegen/build.h; this file
// keeps them as one linear function, plus the AOT exporter.
#include "relax/codegen/build.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "relax/codegen/compiler.h"
#include "relax/codegen/cpp_codegen.h"
#include "relax/codegen/cuda_codegen.h"
#include "relax/codegen/vm_codegen.h"
#include "relax/ir/well_formed.h"
#include "relax/runtime/kernel_library.h"
#include "relax/runtime/library_file.h"
#include "relax/transform/instrument.h"
#include "relax/transform/pipeline.h"

namespace relax {
namespace {

// The lines appended to the kernel source of an AOT library: the executable
// blob embedded by the assembler (.incbin, so that large constants cost no
// compile time) and the entry point that hands it to the runtime.
std::string executable_appendix(const std::string& blob_path) {
  return absl::StrCat(
      "\n// The serialised executable (relax::runtime::Executable), embedded at assembly time.\n",
      embed_file_asm("relax_executable", blob_path, /*nul_terminated=*/false),
      "extern \"C\" {\n"
      // Says that the file is sealed, so that losing the whole trailer reads as a truncation
      // (relax/runtime/library_file.h).
      "__attribute__((used, visibility(\"hidden\"))) const char relax_sealed_marker[] = \"",
      std::string(runtime::kSealedMarker), "\";\n"
      "extern const uint8_t relax_executable_begin[];\n"
      "extern const uint8_t relax_executable_end[];\n"
      "__attribute__((visibility(\"default\"))) const uint8_t* relax_executable(uint64_t* size) {\n"
      "  *size = static_cast<uint64_t>(relax_executable_end - relax_executable_begin);\n"
      "  return relax_executable_begin;\n"
      "}\n"
      "}  // extern \"C\"\n");
}

absl::Status write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::string tmp = path + ".tmp" + std::to_string(reinterpret_cast<uintptr_t>(&bytes));
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return absl::InternalError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

// Writes the AOT library of a built module to `path`.
absl::Status export_aot(const std::string& kernel_source, const std::vector<uint8_t>& blob,
                        const Target& target, const std::string& path) {
  const std::string cache = resolve_cache_dir(target);
  std::error_code ec;
  std::filesystem::create_directories(cache, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("export_library: cannot create the cache directory ", cache, ": ", ec.message()));
  }
  // Named by its content, so that the source embedding it (and with it the JIT cache key) changes
  // with it.
  const std::string blob_path =
      absl::StrCat(cache, "/executable-", content_key({std::string(blob.begin(), blob.end())}), ".bin");
  if (blob_path.find_first_of("\"\\\n") != std::string::npos) {
    return absl::InvalidArgumentError("export_library: the cache directory " + cache +
                                      " contains a quote, backslash or newline");
  }
  if (!std::filesystem::exists(blob_path)) {
    if (absl::Status s = write_file(blob_path, blob); !s.ok()) return s;
  }
  // compile_shared_object seals the object it writes (relax/runtime/library_file.h) and hands
  // back only entries that pass the loader's check, so the export is a copy of a checked file.
  absl::StatusOr<CompiledLibrary> lib =
      compile_shared_object(kernel_source + executable_appendix(blob_path), target);
  if (!lib.ok()) return lib.status();
  // Copied beside `path` and renamed into place, so that `path` is never a partial file; the copy
  // is checked like load_module will check it before it replaces anything.
  static std::atomic<uint64_t> exports{0};
  const std::string tmp = absl::StrCat(path, ".tmp.", static_cast<int64_t>(::getpid()), ".", exports.fetch_add(1));
  std::filesystem::copy_file(lib->library_path, tmp, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return absl::InternalError(absl::StrCat("export_library: cannot write ", path, ": ", ec.message()));
  }
  if (absl::StatusOr<std::string> checked = runtime::check_library_file(tmp); !checked.ok()) {
    std::filesystem::remove(tmp, ec);
    return absl::InternalError(absl::StrCat("export_library: the copy written for ", path,
                                            " does not pass the loader's check: ", checked.status().message()));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string message = ec.message();
    std::filesystem::remove(tmp, ec);
    return absl::InternalError(absl::StrCat("export_library: cannot write ", path, ": ", message));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target, BuildInfo* info) {
  return build(mod, target, transform::default_pipeline(target), info);
}

absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target,
                                      const transform::PassManager& passes, BuildInfo* info) {
  transform::PassContext ctx;
  return build(mod, target, passes, ctx, info);
}

namespace {

// What the steps before loading produce: the executable, the kernel unit's source (for an AOT
// export) and the compiled kernel library.
struct Compiled {
  runtime::Executable exec;
  std::string source;
  CompiledLibrary lib;
  IRModule lowered;
};

// The kernel unit of `lowered`: the C++ kernels for the cpu kind; for cuda, the host launchers
// with the device code compiled by NVRTC appended as an embedded image.
absl::StatusOr<std::string> kernel_source(const IRModule& lowered, const Target& target) {
  if (!target.is_cuda()) return generate_cpp(lowered, target);
  absl::StatusOr<CudaUnit> unit = generate_cuda(lowered, target);
  if (!unit.ok()) return unit.status();
  absl::StatusOr<CompiledCudaImage> image = compile_cuda_image(unit->device_source, target);
  if (!image.ok()) return image.status();
  return unit->host_source + cuda_image_appendix(image->image_path);
}

// Steps 1 to 3 of build (relax/codegen/build.h): passes, bytecode, kernels.
absl::StatusOr<Compiled> compile(const IRModule& mod, const Target& target,
                                 const transform::PassManager& passes, transform::PassContext& ctx) {
  // The input may come from a reader that takes annotations as written (JSON):
  // an annotation that lies would otherwise become a kernel's buffer shape.
  if (absl::Status s = well_formed(mod); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("build: the module is not well formed:\n", s.message()));
  }
  // The test suites set RELAX_VERIFY_PASSES, so that every end-to-end test also checks each
  // pass's output (well formed, annotations current).
  if (std::getenv("RELAX_VERIFY_PASSES") != nullptr) {
    bool verifying = false;
    for (const auto& instrument : ctx.instruments()) {
      verifying |= dynamic_cast<const transform::VerifyInstrument*>(instrument.get()) != nullptr;
    }
    if (!verifying) ctx.add_instrument(std::make_shared<transform::VerifyInstrument>());
  }
  absl::StatusOr<IRModule> lowered = passes.run(mod, ctx);
  if (!lowered.ok()) return lowered.status();
  if (absl::Status s = well_formed(*lowered); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("build: the module is not well formed after the pipeline `", passes.to_string(),
                     "`: ", s.message()));
  }

  VMCodegenOptions vm_options;
  vm_options.runtime_checks = target.runtime_checks;
  vm_options.device = target.is_cuda() ? Device::cuda() : Device::cpu();
  absl::StatusOr<runtime::Executable> exec = compile_to_executable(*lowered, vm_options);
  if (!exec.ok()) return exec.status();

  absl::StatusOr<std::string> source = kernel_source(*lowered, target);
  if (!source.ok()) return source.status();
  absl::StatusOr<CompiledLibrary> lib = compile_shared_object(*source, target);
  if (!lib.ok()) return lib.status();
  return Compiled{*std::move(exec), *std::move(source), *std::move(lib), *std::move(lowered)};
}

void fill_info(const Compiled& compiled, BuildInfo* info) {
  if (info == nullptr) return;
  info->lowered = compiled.lowered;
  info->library_path = compiled.lib.library_path;
  info->source_path = compiled.lib.source_path;
  info->cache_hit = compiled.lib.cache_hit;
}

}  // namespace

absl::StatusOr<runtime::Module> build(const IRModule& mod, const Target& target,
                                      const transform::PassManager& passes, transform::PassContext& ctx,
                                      BuildInfo* info) {
  absl::StatusOr<Compiled> compiled = compile(mod, target, passes, ctx);
  if (!compiled.ok()) return compiled.status();
  fill_info(*compiled, info);
  absl::StatusOr<std::shared_ptr<const runtime::KernelLibrary>> kernels =
      runtime::KernelLibrary::open(compiled->lib.library_path);
  if (!kernels.ok()) return kernels.status();

  absl::StatusOr<runtime::Module> module = runtime::Module::create(std::move(compiled->exec), *kernels);
  if (!module.ok()) return module.status();
  // Serialized when exported, from the module's own executable: no second copy of the weights.
  module->set_exporter([source = std::move(compiled->source), target](const std::string& path,
                                                                       const runtime::Executable& exec) {
    return export_aot(source, exec.serialize(), target, path);
  });
  return module;
}

absl::Status export_library(const IRModule& mod, const Target& target, const std::string& path,
                            BuildInfo* info) {
  transform::PassContext ctx;
  absl::StatusOr<Compiled> compiled = compile(mod, target, transform::default_pipeline(target), ctx);
  if (!compiled.ok()) return compiled.status();
  fill_info(*compiled, info);
  return export_aot(compiled->source, compiled->exec.serialize(), target, path);
}

absl::StatusOr<runtime::Module> build(const IRModule& mod, const std::string& target,
                                      BuildInfo* info) {
  absl::StatusOr<Target> parsed = Target::parse(target);
  if (!parsed.ok()) return parsed.status();
  return build(mod, *parsed, info);
}

}  // namespace relax
