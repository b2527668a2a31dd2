#include "common/count_text.hpp"

#include <algorithm>
#include <charconv>

#include "common/error.hpp"

namespace lumos::common {

int64_t parse_count(const std::string& text, const std::string& what, int64_t min, int64_t max) {
  const std::string expected = what + ": expected a whole number between " + std::to_string(min) +
                               " and " + std::to_string(max) + ", got '" + text + "'";
  // An optional sign, then digits only (from_chars would take "-" but not "+", and stop early).
  const size_t skip = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  LUMOS_EXPECT(text.size() > skip && std::all_of(text.begin() + static_cast<long>(skip), text.end(),
                                                 [](char c) { return c >= '0' && c <= '9'; }),
               expected);
  int64_t v = 0;
  const char* first = text.data() + (text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), v);
  (void)end;
  // Beyond int64 is beyond every range: say so with the text as given.
  LUMOS_EXPECT(ec != std::errc::result_out_of_range,
               what + " must be between " + std::to_string(min) + " and " + std::to_string(max) +
                   " (got " + text + ")");
  LUMOS_EXPECT(v >= min && v <= max, what + " must be between " + std::to_string(min) + " and " +
                                         std::to_string(max) + " (got " + std::to_string(v) + ")");
  return v;
}

std::string count_range_text(int64_t min, int64_t max) {
  return std::to_string(min) + " to " + std::to_string(max);
}

std::vector<std::string> parse_name_list(const std::string& text, const std::string& what) {
  LUMOS_EXPECT(!text.empty(), what + ": the list is empty");
  std::vector<std::string> out;
  size_t at = 0;
  for (;;) {
    const size_t end = text.find(',', at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    LUMOS_EXPECT(!out.back().empty(), what + ": an empty name in '" + text + "'");
    if (end == std::string::npos) return out;
    at = end + 1;
  }
}

}  // namespace lumos::common
