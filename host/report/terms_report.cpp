#include "report/terms_report.hpp"

#include "common/format.hpp"

#include <algorithm>

namespace lumos::report {

void terms_text(std::ostream& os, const std::vector<estimate::TermEffect>& terms, double step_us) {
  os << "terms (each taken out in turn: what it adds to the step)\n";
  // The value column is as wide as its longest value, and no narrower than 34.
  int value_w = 34;
  for (const auto& t : terms)
    if (t.applies) value_w = std::max(value_w, static_cast<int>(t.value.size()));
  os << strprintf("  %-26s %-*s %12s %8s  %s\n", "term", value_w, "value", "added", "of step",
                  "source");
  for (const auto& t : terms) {
    if (!t.applies) {
      os << strprintf("  %-26s %-*s %12s %8s  %s\n", t.term.c_str(), value_w, "not used", "-", "-",
                      t.source.c_str());
      continue;
    }
    os << strprintf("  %-26s %-*s %+11.4fs %+7.1f%%  %s\n", t.term.c_str(), value_w,
                    t.value.c_str(), t.added_us / 1e6,
                    step_us > 0 ? 100 * t.added_us / step_us : 0.0, t.source.c_str());
  }
}

void terms_json(common::JsonWriter& w, const std::vector<estimate::TermEffect>& terms) {
  w.key("terms").begin_array();
  for (const auto& t : terms) {
    w.begin_object();
    w.field("term", t.term).field("value", t.value).field("source", t.source);
    w.field("applies", t.applies);
    if (t.applies)
      w.field("added_s", t.added_us / 1e6).field("step_without_s", t.step_without_us / 1e6);
    w.end_object();
  }
  w.end_array();
}

}  // namespace lumos::report
