// A small streaming JSON writer: enough for reports and Chrome-trace timelines, with correct
// string escaping and finite numbers only. A report document (the default) opens its top-level
// object with "schema_version" (docs/reference/outputs.md), so every --json output says which
// version of its fields it follows; trace formats of other tools (Kineto, Chrome trace) ask for a
// plain document.
#pragma once
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace lumos::common {

// The version of lumos's report documents: raise it when a field is removed or changes meaning
// (adding a field keeps it), and say so in docs/reference/outputs.md.
inline constexpr int kReportSchemaVersion = 1;

class JsonWriter {
 public:
  enum class Document { report, plain };
  explicit JsonWriter(std::ostream& os, Document kind = Document::report)
      : os_(os), report_(kind == Document::report) {}
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(int64_t i);
  JsonWriter& value(uint64_t i);
  JsonWriter& value(int i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(uint32_t i) { return value(static_cast<uint64_t>(i)); }
  JsonWriter& value(bool b);
  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

 private:
  void comma();
  void write_string(std::string_view s);
  std::ostream& os_;
  std::vector<bool> first_{true};
  bool after_key_ = false;
  bool report_;
};

}  // namespace lumos::common
