#include "cost/kernel_classifier.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>

#include "common/error.hpp"

namespace lumos::cost {

std::string classify_kernel(const KernelsDb& db, std::string_view name) {
  std::string low(name);
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // Match the kernel's own name, not its template arguments: "void f<...>(args)" -> "void f".
  const size_t cut = std::min(low.find('<'), low.find('('));
  const std::string head = cut == std::string::npos ? low : low.substr(0, cut);
  for (const std::string* s : std::array<const std::string*, 2>{&head, &low}) {
    for (const KernelPattern& p : db.kernel_patterns) {
      for (const auto& pre : p.prefixes)
        if (s->compare(0, pre.size(), pre) == 0 ||
            s->compare(0, 5 + pre.size(), "void " + pre) == 0)
          return p.kernel_class;
      for (const auto& c : p.contains)
        if (s->find(c) != std::string::npos) return p.kernel_class;
    }
  }
  return "other";
}

}  // namespace lumos::cost
