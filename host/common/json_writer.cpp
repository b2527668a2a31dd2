#include "common/json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lumos::common {

void JsonWriter::comma() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.back()) os_ << ',';
  first_.back() = false;
}

JsonWriter& JsonWriter::begin_object() {
  const bool top_level = first_.size() == 1;
  comma();
  os_ << '{';
  first_.push_back(true);
  if (top_level && report_) field("schema_version", kReportSchemaVersion);
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  os_ << '}';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  comma();
  os_ << '[';
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  os_ << ']';
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::key(std::string_view k) {
  comma();
  write_string(k);
  os_ << ':';
  after_key_ = true;  // the value follows the colon without a comma
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  comma();
  write_string(s);
  return *this;
}

// Runs of characters that need no escape go out in one write: a report of a large trace names
// thousands of kernels, and inserting one character at a time costs a stream call per character.
void JsonWriter::write_string(std::string_view s) {
  os_ << '"';
  size_t run = 0;  // start of the pending unescaped run
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    os_.write(s.data() + run, static_cast<std::streamsize>(i - run));
    run = i + 1;
    switch (c) {
      case '"':
        os_ << "\\\"";
        break;
      case '\\':
        os_ << "\\\\";
        break;
      case '\n':
        os_ << "\\n";
        break;
      case '\r':
        os_ << "\\r";
        break;
      case '\t':
        os_ << "\\t";
        break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\u%04x", c);
        os_ << buf;
      }
    }
  }
  os_.write(s.data() + run, static_cast<std::streamsize>(s.size() - run));
  os_ << '"';
}

JsonWriter& JsonWriter::value(double d) {
  comma();
  if (!std::isfinite(d)) {
    os_ << "null";
    return *this;
  }
  // 15 significant digits reads well; fall back to 17, which always round-trips.
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.15g", d);
  if (std::strtod(buf, nullptr) != d) std::snprintf(buf, sizeof(buf), "%.17g", d);
  os_ << buf;
  return *this;
}

JsonWriter& JsonWriter::value(int64_t i) {
  comma();
  os_ << i;
  return *this;
}
JsonWriter& JsonWriter::value(uint64_t i) {
  comma();
  os_ << i;
  return *this;
}
JsonWriter& JsonWriter::value(bool b) {
  comma();
  os_ << (b ? "true" : "false");
  return *this;
}

}  // namespace lumos::common
