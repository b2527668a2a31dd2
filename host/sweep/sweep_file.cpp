#include "sweep/sweep_file.hpp"

#include <algorithm>

#include <toml++/toml.h>

#include "common/error.hpp"
#include "common/format.hpp"
#include "model/model_toml.hpp"

namespace lumos::sweep {

namespace {

std::string where(const std::string& path, const toml::node& n) {
  return path + ":" + std::to_string(n.source().begin.line);
}

// One value as the command line would give it.
std::string scalar_text(const toml::node& n, const std::string& at) {
  if (const auto* s = n.as_string()) return s->get();
  if (const auto* i = n.as_integer()) return std::to_string(i->get());
  if (const auto* f = n.as_floating_point()) return strprintf("%.17g", f->get());
  if (const auto* b = n.as_boolean()) return b->get() ? "on" : "off";
  throw InputError(at + ": expected a string, a number, a boolean or an array of them");
}

}  // namespace

SweepFile load_sweep_file(const std::string& path, const std::vector<std::string>& known) {
  const toml::table root = model::parse_toml_file(path, "sweep");
  SweepFile f;
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (key == "model") {
      const auto* t = node.as_table();
      LUMOS_EXPECT(t != nullptr, where(path, node) + ": model: expected a [model] table");
      f.model = model::model_from_toml(*t, path);
    } else if (key == "sweep") {
      const auto* t = node.as_table();
      LUMOS_EXPECT(t != nullptr, where(path, node) + ": sweep: expected a [sweep] table");
      for (const auto& [opt_key, value] : *t) {
        std::string opt(opt_key.str());
        std::replace(opt.begin(), opt.end(), '_', '-');
        const std::string at = where(path, value) + ": " + std::string(opt_key.str());
        if (std::find(known.begin(), known.end(), opt) == known.end()) {
          std::string list;
          for (std::string n : known) {
            std::replace(n.begin(), n.end(), '-', '_');
            if (!list.empty()) list += ", ";
            list += n;
          }
          throw InputError(at + ": unknown key (expected one of " + list + ")");
        }
        std::string text;
        if (const auto* arr = value.as_array()) {
          LUMOS_EXPECT(!arr->empty(), at + ": the list is empty");
          // Speed axes are separated by ';' (each holds a list of its own).
          const char sep = opt == "speed" ? ';' : ',';
          for (const auto& item : *arr) {
            if (!text.empty()) text += sep;
            text += scalar_text(item, at);
          }
        } else {
          text = scalar_text(value, at);
        }
        f.options[opt] = text;
      }
    } else {
      throw InputError(where(path, node) + ": " + key +
                       ": unknown table (expected [model] and [sweep])");
    }
  }
  return f;
}

}  // namespace lumos::sweep
