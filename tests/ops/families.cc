// The list of the conformance table's families: one line per family.
#include "families.h"

namespace relax::ops_test {

const std::vector<OpFamily>& op_families() {
  static const std::vector<OpFamily> families = {
      {"elementwise", elementwise_rows},
      {"linalg", linalg_rows},
      {"nn", nn_rows},
      {"dynamic", dynamic_rows},
      {"reduce", reduce_rows},
      {"create", create_rows},
      {"conv", conv_rows},
      {"quantize", quantize_rows},
      {"manipulate", manipulate_rows},
  };
  return families;
}

}  // namespace relax::ops_test
