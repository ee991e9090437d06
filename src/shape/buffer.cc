// Buffer helpers (the Buffer handle itself is header-only; see buffer.h).
#include "relax/shape/buffer.h"

namespace relax {

std::string_view buffer_scope_name(BufferScope scope) {
  switch (scope) {
    case BufferScope::kGlobal:
      return "global";
    case BufferScope::kLocal:
      return "local";
    case BufferScope::kWorkspace:
      return "workspace";
  }
  return "?";
}

}  // namespace relax
