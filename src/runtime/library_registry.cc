// The registry of library functions for call_dps_library (see module.h).
//
// Registrations are rare (start-up, tests) and lookups happen once per
// Module::create, so one mutex guards the maps. Exact entries are never
// destroyed: a replaced function is kept alive, so a pointer that
// find_library_function returned stays valid for the life of the process.
//
// Families (register_library_family) map a name prefix to a resolver that makes
// a new function object per resolution. The runtime's own families (oneDNN's
// "onednn." when built with it, cuBLAS's "cublas." and cuDNN's "cudnn." when built
// with CUDA) are entered when the registry is created, not
// by a static initialiser of their file: a static library's object file that no
// symbol pulls in would be dropped by the linker, and its registration with it.
// The runtime's own exact functions ("kv_cache.attention", relax/runtime/kv_cache.h)
// are entered there too, for the same reason.
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "relax/runtime/kv_cache.h"
#include "relax/runtime/module.h"

#ifdef RELAX_WITH_ONEDNN
#include "onednn/onednn_function.h"
#endif
#ifdef RELAX_WITH_CUDA
#include "cuda/cuda_library_functions.h"
#endif

namespace relax::runtime {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const LibraryFunction>> functions;
  std::map<std::string, LibraryFunctionTraits> traits;  // of the exact names
  std::vector<std::shared_ptr<const LibraryFunction>> replaced;
  std::map<std::string, LibraryFamilyResolver> families;
};

Registry* make_registry() {
  auto* r = new Registry();
  r->functions.emplace(kKVCacheAttentionName, std::make_shared<const LibraryFunction>(kv_cache_attention));
  // On a GPU it copies the lengths and sequence ids it checks to the host.
  r->traits[kKVCacheAttentionName] = LibraryFunctionTraits{.synchronises_host = true};
#ifdef RELAX_WITH_ONEDNN
  r->families.emplace(onednn::kFamilyPrefix, onednn::resolve_function);
#endif
#ifdef RELAX_WITH_CUDA
  r->families.emplace("cublas.", cuda::resolve_cublas_function);
  r->families.emplace("cudnn.", cuda::resolve_cudnn_function);
#endif
  return r;
}

Registry& registry() {
  static Registry* r = make_registry();  // never destroyed: lookups may run during exit
  return *r;
}

}  // namespace

void register_library_function(const std::string& name, LibraryFunction fn, LibraryFunctionTraits traits) {
  Registry& r = registry();
  auto entry = std::make_shared<const LibraryFunction>(std::move(fn));
  std::lock_guard<std::mutex> lock(r.mu);
  r.traits[name] = traits;
  auto [it, inserted] = r.functions.try_emplace(name, entry);
  if (!inserted) {
    r.replaced.push_back(std::move(it->second));
    it->second = std::move(entry);
  }
}

const LibraryFunction* find_library_function(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.functions.find(name);
  return it == r.functions.end() ? nullptr : it->second.get();
}

LibraryFunctionTraits library_function_traits(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.traits.find(name);
  return it == r.traits.end() ? LibraryFunctionTraits{} : it->second;
}

void register_library_family(const std::string& prefix, LibraryFamilyResolver resolver) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.families[prefix] = std::move(resolver);
}

absl::StatusOr<LibraryFunction> resolve_library_function(const std::string& name) {
  Registry& r = registry();
  LibraryFamilyResolver resolver;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (auto it = r.functions.find(name); it != r.functions.end() && *it->second) {
      return *it->second;
    }
    // The longest registered prefix of `name`: the families are few, a scan is enough.
    size_t best = 0;
    for (const auto& [prefix, family] : r.families) {
      if (prefix.size() >= best && absl::StartsWith(name, prefix) && family) {
        best = prefix.size();
        resolver = family;
      }
    }
  }
  // Outside the lock: a resolver may do real work (and could register something itself).
  if (resolver) return resolver(name);
  return absl::NotFoundError(absl::StrCat("library function ", name,
                                          " is not registered (see register_library_function)"));
}

}  // namespace relax::runtime
