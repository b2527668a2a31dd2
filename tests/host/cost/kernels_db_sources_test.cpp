// Every constant in kernels_db/ names its source (docs/design.md, "kernels_db/": "a primary source
// per value"). A number is sourced when the object holding it, or one holding that object below
// the file's root, has a `source` or `sources` field, a `<name>_source` field whose name starts the
// key the number sits under (`floor_source` for `floor_us`), or is a measurement lumos wrote
// (`generated`: its date and commit). A file-wide description does not count: it would cover a
// value added later without one. Format versions and compute capabilities are identifiers, not
// constants.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

bool is_identifier(const std::string& key) {
  return key == "schema_version" || key == "sm_version";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Whether `o` names a source for what it holds under `key` (empty: under an array index).
bool names_source(object o, const std::string& key, bool root) {
  for (auto field : o) {
    const std::string k(field.key);
    if (!root && (k == "source" || k == "sources" || k == "generated")) return true;
    for (const char* tail : {"_source", "_sources"}) {
      if (!ends_with(k, tail)) continue;
      const std::string stem = k.substr(0, k.size() - std::string(tail).size());
      if (!stem.empty() && key.rfind(stem, 0) == 0) return true;
    }
  }
  return false;
}

struct Level {
  bool is_object;
  object obj;       // when is_object
  std::string key;  // what the walk went into from here ("" for an array element)
};

// Appends the path of every number under `e` that no enclosing object sources.
void unsourced(element e, std::vector<Level>& up, const std::string& path,
               std::vector<std::string>* out) {
  switch (e.type()) {
    case element_type::OBJECT: {
      object o = e.get_object().value();
      for (auto field : o) {
        up.push_back({true, o, std::string(field.key)});
        unsourced(field.value, up, path + "/" + std::string(field.key), out);
        up.pop_back();
      }
      return;
    }
    case element_type::ARRAY: {
      size_t i = 0;
      const simdjson::dom::array items = e.get_array().value();  // kept: the loop borrows it
      for (element item : items) {
        up.push_back({false, {}, ""});
        unsourced(item, up, path + "/" + std::to_string(i++), out);
        up.pop_back();
      }
      return;
    }
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE: {
      // The key the number is stored under: the innermost object's.
      std::string key;
      for (auto it = up.rbegin(); it != up.rend() && key.empty(); ++it)
        if (it->is_object) key = it->key;
      if (is_identifier(key)) return;
      for (size_t d = up.size(); d-- > 0;) {
        if (!up[d].is_object) continue;
        // up[d].key: the key under which this object holds the branch the number is on.
        if (names_source(up[d].obj, up[d].key, d == 0)) return;
      }
      out->push_back(path);
      return;
    }
    default:
      return;
  }
}

std::vector<std::string> unsourced_numbers(const std::string& json) {
  simdjson::dom::parser parser;
  element root = parser.parse(json).value();
  std::vector<Level> up;
  std::vector<std::string> out;
  unsourced(root, up, "", &out);
  return out;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(KernelsDbSources, EveryConstantNamesItsSource) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(LUMOS_KERNELS_DB)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const auto missing = unsourced_numbers(read_text(entry.path()));
    for (const std::string& path : missing)
      ADD_FAILURE() << entry.path().filename().string() << ": " << path << " names no source";
  }
  EXPECT_GE(files, 10);  // every file of kernels_db/README.md was walked
}

TEST(KernelsDbSources, AConstantWithoutASourceIsFound) {
  // The check itself: a value beside a sourced one, a nested value whose object has no source,
  // and a file-wide source that does not count.
  const std::string json = R"({
    "schema_version": 1,
    "source": "a description of the whole file",
    "floor_us": 3, "floor_source": "a paper",
    "latency_us": 7,
    "table": {"a": {"value": 1.5, "source": "a figure"}, "b": {"value": 2.5}},
    "rows": [{"x": 4, "sources": ["a log"]}, {"x": 5}],
    "coverage": {"rows": 50, "generated": "2026-12-01"}
  })";
  const std::vector<std::string> want = {"/latency_us", "/table/b/value", "/rows/1/x"};
  EXPECT_EQ(unsourced_numbers(json), want);
}
