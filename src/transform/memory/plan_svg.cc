// A memory plan as an SVG timeline (relax/transform/memory_planner.h, plan_to_svg).
//
// The picture is a plain SVG 1.1 document with no script and no external reference: one <rect>
// per tensor, x from its first use to one past its last use, y from its arena offset down by its
// size, both scaled into a fixed drawing area; a dashed line at each block's start; axes with
// their extremes labelled; a caption. Colors cycle through a fixed palette by block, so tensors
// that share storage share a color.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "relax/transform/memory_planner.h"

namespace relax::transform::memory {
namespace {

constexpr double kLeft = 90, kTop = 40, kWidth = 720, kHeight = 360, kBottom = 70;
constexpr std::array<const char*, 8> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                  "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

absl::StatusOr<int64_t> value_of(const SymExpr& e, const SymVarMap<int64_t>& values, const std::string& what) {
  absl::StatusOr<int64_t> v = evaluate(e, values);
  if (!v.ok()) return absl::InvalidArgumentError(absl::StrCat(what, " `", e.to_string(), "`: ", v.status().message()));
  return *v;
}

}  // namespace

absl::StatusOr<std::string> plan_to_svg(const MemoryPlan& plan, const std::vector<PlannedTensor>& tensors,
                                        const SymVarMap<int64_t>& values, const std::string& title) {
  if (absl::Status s = check_plan(plan, tensors, values); !s.ok()) return s;
  absl::StatusOr<int64_t> arena = value_of(plan.arena_size, values, "the arena size");
  if (!arena.ok()) return arena.status();
  int64_t steps = 1;
  for (const PlannedTensor& t : tensors) steps = std::max(steps, t.last_use + 1);
  // The peak of bytes live at once, and the sum of every tensor's bytes.
  std::vector<int64_t> sizes, offsets;
  int64_t sum = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    absl::StatusOr<int64_t> size = value_of(tensors[i].size_bytes, values, "the size of " + tensors[i].name);
    absl::StatusOr<int64_t> offset = value_of(plan.arena_offset(i), values, "the offset of " + tensors[i].name);
    if (!size.ok()) return size.status();
    if (!offset.ok()) return offset.status();
    sizes.push_back(*size);
    offsets.push_back(*offset);
    sum += *size;
  }
  int64_t peak = 0;
  for (int64_t step = 0; step < steps; ++step) {
    int64_t live = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].first_use <= step && step <= tensors[i].last_use) live += sizes[i];
    }
    peak = std::max(peak, live);
  }
  const double x_scale = kWidth / static_cast<double>(steps);
  const double y_scale = kHeight / static_cast<double>(std::max<int64_t>(*arena, 1));
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n",
      kLeft + kWidth + 30, kTop + kHeight + kBottom);
  absl::StrAppend(&svg, "<title>", escape(title), "</title>\n");
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">%s</text>\n", kLeft, escape(title));
  absl::StrAppendFormat(&svg, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"#f7f7f7\" stroke=\"#999\"/>\n",
                        kLeft, kTop, kWidth, kHeight);
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    absl::StatusOr<int64_t> offset = value_of(plan.blocks[b].offset, values, absl::StrCat("the offset of block ", b));
    if (!offset.ok()) return offset.status();
    const double y = kTop + static_cast<double>(*offset) * y_scale;
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                          "stroke-dasharray=\"4 3\"/>\n",
                          kLeft, y, kLeft + kWidth, y);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PlannedTensor& t = tensors[i];
    const double x = kLeft + static_cast<double>(t.first_use) * x_scale;
    const double w = static_cast<double>(t.last_use - t.first_use + 1) * x_scale;
    const double y = kTop + static_cast<double>(offsets[i]) * y_scale;
    const double h = std::max(static_cast<double>(sizes[i]) * y_scale, 1.0);
    absl::StrAppendFormat(&svg,
                          "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                          "fill-opacity=\"0.8\" stroke=\"#333\" stroke-width=\"0.5\"><title>%s: %d bytes at "
                          "offset %d, live [%d, %d]</title></rect>\n",
                          x, y, w, h, kPalette[plan.tensors[i].block % kPalette.size()], escape(t.name), sizes[i],
                          offsets[i], t.first_use, t.last_use);
    if (h >= 14 && w >= 40) {
      absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#fff\">%s</text>\n", x + 3, y + 13,
                            escape(t.name));
    }
  }
  // Axes: instruction indices along x, arena bytes down y.
  const double axis_y = kTop + kHeight;
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\">0</text>\n", kLeft, axis_y + 16);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%d</text>\n", kLeft + kWidth,
                        axis_y + 16, steps);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">instruction</text>\n",
                        kLeft + kWidth / 2, axis_y + 16);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">0 B</text>\n", kLeft - 6, kTop + 12);
  absl::StrAppendFormat(&svg, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%d B</text>\n", kLeft - 6, axis_y,
                        *arena);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.0f\" y=\"%.0f\">arena %d bytes in %d blocks; peak live %d bytes; %d tensors "
                        "of %d bytes in all</text>\n",
                        kLeft, axis_y + 44, *arena, plan.blocks.size(), peak, tensors.size(), sum);
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

}  // namespace relax::transform::memory
