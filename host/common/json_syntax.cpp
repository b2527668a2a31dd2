#include "common/json_syntax.hpp"

#include <vector>

namespace lumos::common {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class Validator {
 public:
  explicit Validator(std::string_view t) : t_(t) {}

  // The offset of the first error, or npos.
  size_t run() {
    // What the parser expects next inside each open container.
    enum class Want { kValue, kKeyOrClose, kKey, kColon, kCommaOrClose };
    std::vector<char> open;  // '{' or '['
    Want want = Want::kValue;
    for (;;) {
      skip_space();
      if (want == Want::kValue) {
        if (at_end()) return i_;
        const char c = t_[i_];
        if (c == '{' || c == '[') {
          open.push_back(c);
          ++i_;
          skip_space();
          if (at_end()) return i_;
          if (t_[i_] == (c == '{' ? '}' : ']')) {
            ++i_;
            open.pop_back();
            want = Want::kCommaOrClose;
          } else {
            want = c == '{' ? Want::kKey : Want::kValue;
          }
          continue;
        }
        const size_t bad = scalar();
        if (bad != npos) return bad;
        want = Want::kCommaOrClose;
        continue;
      }
      if (want == Want::kKey || want == Want::kKeyOrClose) {
        if (at_end() || t_[i_] != '"') return i_;
        const size_t bad = string();
        if (bad != npos) return bad;
        want = Want::kColon;
        continue;
      }
      if (want == Want::kColon) {
        if (at_end() || t_[i_] != ':') return i_;
        ++i_;
        want = Want::kValue;
        continue;
      }
      // kCommaOrClose: after a value.
      if (open.empty()) return at_end() ? npos : i_;
      if (at_end()) return i_;
      const char c = t_[i_];
      if (c == ',') {
        ++i_;
        want = open.back() == '{' ? Want::kKey : Want::kValue;
      } else if (c == (open.back() == '{' ? '}' : ']')) {
        ++i_;
        open.pop_back();
      } else {
        return i_;
      }
    }
  }

  static constexpr size_t npos = std::string_view::npos;

 private:
  bool at_end() const { return i_ >= t_.size(); }
  void skip_space() {
    while (!at_end() && is_space(t_[i_])) ++i_;
  }
  size_t scalar() {
    const char c = t_[i_];
    if (c == '"') return string();
    if (c == '-' || is_digit(c)) return number();
    for (std::string_view word : {"true", "false", "null"})
      if (c == word[0]) {
        for (size_t k = 0; k < word.size(); ++k, ++i_)
          if (at_end() || t_[i_] != word[k]) return i_;
        return npos;
      }
    return i_;
  }
  size_t string() {
    ++i_;  // the opening quote
    while (!at_end()) {
      const unsigned char c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') {
        ++i_;
        return npos;
      }
      if (c < 0x20) return i_;  // a raw control character
      if (c == '\\') {
        ++i_;
        if (at_end()) return i_;
        const char e = t_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            ++i_;
            if (at_end() || !is_hex(t_[i_])) return i_;
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return i_;
        }
      }
      ++i_;
    }
    return i_;
  }
  size_t number() {
    if (t_[i_] == '-') ++i_;
    if (at_end() || !is_digit(t_[i_])) return i_;
    if (t_[i_] == '0') {
      ++i_;
    } else {
      while (!at_end() && is_digit(t_[i_])) ++i_;
    }
    if (!at_end() && t_[i_] == '.') {
      ++i_;
      if (at_end() || !is_digit(t_[i_])) return i_;
      while (!at_end() && is_digit(t_[i_])) ++i_;
    }
    if (!at_end() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (!at_end() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (at_end() || !is_digit(t_[i_])) return i_;
      while (!at_end() && is_digit(t_[i_])) ++i_;
    }
    return npos;
  }

  std::string_view t_;
  size_t i_ = 0;
};

}  // namespace

std::optional<size_t> json_syntax_error_offset(std::string_view text) {
  const size_t at = Validator(text).run();
  if (at == Validator::npos) return std::nullopt;
  return at;
}

std::string text_position(std::string_view text, size_t offset) {
  if (offset > text.size()) offset = text.size();
  size_t line = 1, line_start = 0;
  for (size_t k = 0; k < offset; ++k)
    if (text[k] == '\n') ++line, line_start = k + 1;
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1) +
         " (byte " + std::to_string(offset) + ")";
}

std::string json_error_position(std::string_view text) {
  const std::optional<size_t> at = json_syntax_error_offset(text);
  return at ? ": " + text_position(text, *at) : std::string();
}

}  // namespace lumos::common
