// Decimal options: declared as text and read by parse_finite, so that a value with trailing
// characters ("12abc"), inf, nan or one beyond a double's range is refused in one line naming the
// option, where cxxopts's own parse would truncate it or throw out of the command.
#pragma once
#include <cxxopts.hpp>

#include <memory>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::cli {

// The option's value: text, read by decimal_of.
inline std::shared_ptr<cxxopts::Value> decimal_value(const char* default_value = nullptr) {
  auto v = cxxopts::value<std::string>();
  return default_value ? v->default_value(default_value) : v;
}

// The number given (or defaulted); `who` begins the message ("lumos carbon").
inline double decimal_of(const cxxopts::ParseResult& a, const std::string& key,
                         const std::string& who) {
  const std::string text = a[key].as<std::string>();
  const std::optional<double> v = parse_finite(text);
  LUMOS_EXPECT(v.has_value(),
               who + ": --" + key + ": expected a finite number, got '" + text + "'");
  return *v;
}

// The number when the option is given, else nothing.
inline std::optional<double> decimal_if(const cxxopts::ParseResult& a, const std::string& key,
                                        const std::string& who) {
  return a.count(key) ? std::optional<double>(decimal_of(a, key, who)) : std::nullopt;
}

}  // namespace lumos::cli
