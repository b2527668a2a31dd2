// Count options: declared as text and read by common::parse_count, so that a value too large for
// its type is refused rather than wrapped, and each range is written once, for the check and for
// --help ("tensor parallel degree (1 to 65536)").
#pragma once
#include <cxxopts.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "common/count_text.hpp"

namespace lumos::cli {

struct CountOption {
  const char* name;  // the long option, without "--"
  int64_t min;
  int64_t max;
};

// The option's help with its range appended.
inline std::string count_help(const std::string& help, const CountOption& c) {
  return help + " (" + common::count_range_text(c.min, c.max) + ")";
}

// The option's value: text, parsed by count_of.
inline std::shared_ptr<cxxopts::Value> count_value(const char* default_value = nullptr) {
  auto v = cxxopts::value<std::string>();
  return default_value ? v->default_value(default_value) : v;
}

// The count given (or defaulted), checked against its range; `prefix` begins the message.
inline int64_t count_of(const cxxopts::ParseResult& a, const CountOption& c,
                        const std::string& prefix = "") {
  return common::parse_count(a[c.name].as<std::string>(), prefix + "--" + c.name, c.min, c.max);
}

}  // namespace lumos::cli
