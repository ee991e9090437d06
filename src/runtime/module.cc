// Module and Function: an Executable bound to its kernels, run on the VM.
//
// A Module's state (the executable, the resolved kernels and library
// functions, the VirtualMachine) is built once by create() and never changes
// afterwards, except for the exporter that the code generator attaches right
// after creating it, and the pool of execution contexts. Functions hold a
// reference to that state, so a Function outlives the Module object it came
// from. A module on a device (Executable::device) is created only when the device can be
// used, and its constants are uploaded there then. Every call runs on a fresh frame stack and
// on an ExecutionContext no
// other running call has, which is what makes concurrent calls safe: the pool
// hands each call an idle context (a new one when all are busy) under a
// mutex that guards nothing but the pool's list, and takes it back after.
#include "relax/runtime/module.h"

#include <filesystem>
#include <mutex>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "relax/support/check.h"
#include "vm/vm.h"
#include "vm/vm_device.h"

namespace relax::runtime {

namespace {

// The idle execution contexts of a Module; they die with it.
class ContextPool {
 public:
  std::unique_ptr<ExecutionContext> take() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<ExecutionContext> ctx = std::move(idle_.back());
        idle_.pop_back();
        return ctx;
      }
    }
    return std::make_unique<ExecutionContext>();
  }
  void give_back(std::unique_ptr<ExecutionContext> ctx) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(ctx));
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<ExecutionContext>> idle_;  // the last given back is taken first
};

// "function <f> calls " for the first function of `exec` that calls library function
// `index`, or "" when none does.
std::string library_caller(const Executable& exec, size_t index) {
  for (const VMFunction& fn : exec.functions) {
    for (const Instruction& ins : fn.code) {
      if (ins.op == Opcode::kCallLibrary && ins.index == static_cast<int64_t>(index)) {
        return absl::StrCat("function ", fn.name, " calls ");
      }
    }
  }
  return "";
}

}  // namespace

struct Module::Impl {
  Executable exec;
  std::shared_ptr<const KernelLibrary> kernels;
  std::unique_ptr<VirtualMachine> vm;  // points into `exec`: Impl never moves
  LibraryExporter exporter;  // relax::build's, or load_module's copy of the library file
  ContextPool contexts;
};

struct Function::Impl {
  std::shared_ptr<const void> module;  // keeps the Module's state, and so `vm`, alive
  const VirtualMachine* vm = nullptr;
  ContextPool* contexts = nullptr;  // the Module's, kept alive by `module`
  int32_t index = -1;
  std::string name;
  absl::Status error;  // a Function of an unknown name returns this from every call
};

// ---------------------------------------------------------------------------
// Function

const std::string& Function::name() const {
  static const std::string* const kEmpty = new std::string();
  return impl_ ? impl_->name : *kEmpty;
}

absl::StatusOr<Value> Function::call(std::vector<Value> args) const {
  return call(std::move(args), nullptr);
}

absl::StatusOr<Value> Function::call(std::vector<Value> args, CallMemoryStats* stats) const {
  if (!impl_) return absl::FailedPreconditionError("call of an undefined Function");
  if (!impl_->error.ok()) return impl_->error;
  std::unique_ptr<ExecutionContext> ctx = impl_->contexts->take();
  absl::StatusOr<Value> result = call(*ctx, std::move(args));
  if (stats != nullptr) *stats = ctx->last_call_stats();
  impl_->contexts->give_back(std::move(ctx));
  return result;
}

absl::StatusOr<Value> Function::call(ExecutionContext& ctx, std::vector<Value> args) const {
  if (!impl_) return absl::FailedPreconditionError("call of an undefined Function");
  if (!impl_->error.ok()) return impl_->error;
  if (absl::Status s = ctx.begin_call(impl_->module, impl_->vm->num_storage_sites(), impl_->vm->device());
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(impl_->name, ": ", s.message()));
  }
  absl::StatusOr<Value> result = impl_->vm->invoke(impl_->index, std::move(args), ctx);
  ctx.end_call();  // while `result` still holds the outputs' storages
  return result;
}

// ---------------------------------------------------------------------------
// Module

absl::StatusOr<Module> Module::create(Executable exec, std::shared_ptr<const KernelLibrary> kernels) {
  if (absl::Status s = exec.validate(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Module::create: ", s.message()));
  }
  // A module on a device needs the device now: its constants go there.
  if (absl::Status s = vm_device::check_usable(exec.device); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("Module::create: the executable runs on ",
                                               exec.device.to_string(), ": ", s.message()));
  }
  std::vector<RelaxKernelFn> kernel_fns;
  kernel_fns.reserve(exec.kernel_names.size());
  for (const std::string& name : exec.kernel_names) {
    if (kernels == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "Module::create: the executable calls kernel ", name, " but no kernel library was given"));
    }
    absl::StatusOr<RelaxKernelFn> fn = kernels->find(name);
    if (!fn.ok()) {
      return absl::Status(fn.status().code(), absl::StrCat("Module::create: ", fn.status().message()));
    }
    kernel_fns.push_back(*fn);
  }
  // Each name is resolved once, here: a family's function object (its caches, its packed
  // weights) belongs to this Module.
  std::vector<LibraryFunction> library;
  library.reserve(exec.library_functions.size());
  for (size_t i = 0; i < exec.library_functions.size(); ++i) {
    const std::string& name = exec.library_functions[i];
    absl::StatusOr<LibraryFunction> fn = resolve_library_function(name);
    if (fn.ok() && !*fn) {
      fn = absl::InternalError(absl::StrCat("library function ", name, " resolved to nothing"));
    }
    if (!fn.ok()) {
      if (fn.status().code() == absl::StatusCode::kNotFound) {
        return absl::Status(fn.status().code(),
                            absl::StrCat("Module::create: ", fn.status().message()));
      }
      return absl::Status(fn.status().code(),
                          absl::StrCat("Module::create: ", library_caller(exec, i),
                                       "library function ", name, ": ", fn.status().message()));
    }
    library.push_back(*std::move(fn));
  }
  std::vector<BuiltinFunction> builtins;
  builtins.reserve(exec.builtin_functions.size());
  for (const std::string& name : exec.builtin_functions) {
    BuiltinFunction fn = find_builtin(name);
    if (fn == nullptr) {
      return absl::NotFoundError(absl::StrCat("Module::create: the executable calls builtin ", name,
                                              ", which this runtime does not have (it has: ",
                                              absl::StrJoin(builtin_names(), ", "), ")"));
    }
    builtins.push_back(fn);
  }
  // The VM's constants: the executable's host values, uploaded once to a device.
  std::vector<Value> constants;
  constants.reserve(exec.constants.size());
  for (size_t i = 0; i < exec.constants.size(); ++i) {
    absl::StatusOr<Value> c = vm_device::copy_to(exec.constants[i], exec.device);
    if (!c.ok()) {
      return absl::Status(c.status().code(), absl::StrCat("Module::create: uploading constant ", i, " (",
                                                          exec.constants[i].describe(), ") to ",
                                                          exec.device.to_string(), ": ",
                                                          c.status().message()));
    }
    constants.push_back(*std::move(c));
  }
  auto impl = std::make_shared<Impl>();
  impl->exec = std::move(exec);
  impl->kernels = std::move(kernels);
  impl->vm = std::make_unique<VirtualMachine>(&impl->exec, std::move(kernel_fns), std::move(library),
                                             std::move(builtins), std::move(constants));
  Module m;
  m.impl_ = std::move(impl);
  return m;
}

absl::StatusOr<Function> Module::get_function(const std::string& name) const {
  if (!impl_) return absl::FailedPreconditionError("get_function on an undefined Module");
  const int index = impl_->exec.find_function(name);
  if (index < 0) {
    return absl::NotFoundError(absl::StrCat("the module has no function ", name, " (it has: ",
                                            absl::StrJoin(function_names(), ", "), ")"));
  }
  auto f = std::make_shared<Function::Impl>();
  f->module = impl_;
  f->vm = impl_->vm.get();
  f->contexts = &impl_->contexts;
  f->index = index;
  f->name = name;
  Function fn;
  fn.impl_ = std::move(f);
  return fn;
}

Function Module::operator[](const std::string& name) const {
  absl::StatusOr<Function> fn = get_function(name);
  if (fn.ok()) return *std::move(fn);
  auto f = std::make_shared<Function::Impl>();
  f->module = impl_;
  f->name = name;
  f->error = fn.status();
  Function missing;
  missing.impl_ = std::move(f);
  return missing;
}

std::vector<std::string> Module::function_names() const {
  std::vector<std::string> names;
  if (!impl_) return names;
  for (const VMFunction& fn : impl_->exec.functions) names.push_back(fn.name);
  return names;
}

const Executable& Module::executable() const {
  RELAX_CHECK(impl_ != nullptr) << "executable() of an undefined Module";
  return impl_->exec;
}

const std::shared_ptr<const KernelLibrary>& Module::kernels() const {
  RELAX_CHECK(impl_ != nullptr) << "kernels() of an undefined Module";
  return impl_->kernels;
}

void Module::set_exporter(LibraryExporter exporter) {
  RELAX_CHECK(impl_ != nullptr) << "set_exporter on an undefined Module";
  impl_->exporter = std::move(exporter);
}

void Module::set_replay_options(const ReplayOptions& options) {
  RELAX_CHECK(impl_ != nullptr) << "set_replay_options on an undefined Module";
  impl_->vm->plans().set_options(options);
}

ReplayOptions Module::replay_options() const {
  RELAX_CHECK(impl_ != nullptr) << "replay_options of an undefined Module";
  return impl_->vm->plans().options();
}

ReplayStats Module::replay_stats() const {
  RELAX_CHECK(impl_ != nullptr) << "replay_stats of an undefined Module";
  return impl_->vm->plans().stats();
}

absl::Status Module::export_library(const std::string& path) const {
  if (!impl_) return absl::FailedPreconditionError("export_library of an undefined Module");
  if (impl_->exporter) return impl_->exporter(path, impl_->exec);
  return absl::FailedPreconditionError(
      "export_library: this module was neither built by relax::build nor loaded by load_module, "
      "so there is no shared object to write");
}

namespace {

// The exporter of a loaded module: the library file it came from is the export.
absl::Status copy_library(const std::string& source, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && fs::equivalent(source, path, ec)) return absl::OkStatus();
  fs::copy_file(source, path, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("export_library: cannot copy ", source, " to ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------------------
// load_module

absl::StatusOr<Module> load_module(const std::string& path) {
  // Every message names the path, once.
  auto fail = [&path](const absl::Status& s) {
    const std::string message(s.message());
    return absl::Status(s.code(), message.find(path) != std::string::npos
                                      ? absl::StrCat("load_module: ", message)
                                      : absl::StrCat("load_module: ", path, ": ", message));
  };
  absl::StatusOr<std::shared_ptr<const KernelLibrary>> lib = KernelLibrary::open(path);
  if (!lib.ok()) return fail(lib.status());
  std::optional<std::span<const uint8_t>> blob = (*lib)->embedded_executable();
  if (!blob) {
    return absl::InvalidArgumentError(absl::StrCat(
        "load_module: ", path, " embeds no executable (a JIT kernel library, not a module "
        "written by export_library)"));
  }
  absl::StatusOr<Executable> exec = Executable::deserialize(*blob);
  if (!exec.ok()) {
    return absl::Status(exec.status().code(), absl::StrCat("load_module: ", path,
                                                           ": embedded executable: ",
                                                           exec.status().message()));
  }
  absl::StatusOr<Module> m = Module::create(*std::move(exec), *std::move(lib));
  if (!m.ok()) return fail(m.status());
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  std::string source = ec ? path : absolute.string();
  m->set_exporter([source](const std::string& out, const Executable&) { return copy_library(source, out); });
  return m;
}

}  // namespace relax::runtime
