// The registry of library functions for call_dps_library (see module.h).
//
// Registrations are rare (start-up, tests) and lookups happen once per
// Module::create, so one mutex guards the map. Entries are never destroyed:
// a replaced function is kept alive, so a pointer that find_library_function
// returned stays valid for the life of the process.
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "relax/runtime/module.h"

namespace relax::runtime {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const LibraryFunction>> functions;
  std::vector<std::shared_ptr<const LibraryFunction>> replaced;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: lookups may run during exit
  return *r;
}

}  // namespace

void register_library_function(const std::string& name, LibraryFunction fn) {
  Registry& r = registry();
  auto entry = std::make_shared<const LibraryFunction>(std::move(fn));
  std::lock_guard<std::mutex> lock(r.mu);
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

}  // namespace relax::runtime
