#include "cli/model_options.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace lumos::cli {

void model_options(cxxopts::Options& o, const char* default_model) {
  o.add_options()("model",
                  "preset: gpt3-15b, gpt3-44b, gpt3-117b, gpt3-175b, llama3-8b, "
                  "llama3-70b, llama3-405b",
                  cxxopts::value<std::string>()->default_value(default_model))(
      "model-file", "TOML model file (optional `preset = ...`, then fields)",
      cxxopts::value<std::string>())("layers", "override: transformer layers",
                                     cxxopts::value<std::string>())(
      "hidden", "override: hidden size", cxxopts::value<std::string>())(
      "ffn", "override: MLP inner size", cxxopts::value<std::string>())(
      "heads", "override: attention heads", cxxopts::value<std::string>())(
      "kv-heads", "override: KV heads (query groups)", cxxopts::value<std::string>())(
      "head-dim", "override: head dimension", cxxopts::value<std::string>())(
      "vocab", "override: vocabulary", cxxopts::value<std::string>())(
      "seq", "override: sequence length", cxxopts::value<std::string>())(
      "act", "override: gelu | swiglu", cxxopts::value<std::string>());
}

model::ModelSpec model_from(const cxxopts::ParseResult& a, const model::ModelSpec* base) {
  model::ModelSpec m;
  if (base && !a.count("model") && !a.count("model-file")) {
    m = *base;
  } else if (a.count("model-file")) {
    m = model::load_model_toml(a["model-file"].as<std::string>());
    if (a.count("model"))
      throw InputError("give --model or --model-file, not both (a file may name a preset)");
  } else {
    m = model::preset(a["model"].as<std::string>());
  }
  std::vector<model::FieldOverride> overrides;
  for (const char* k :
       {"layers", "hidden", "ffn", "heads", "kv-heads", "head-dim", "vocab", "seq", "act"})
    if (a.count(k)) {
      std::string key = k;
      std::replace(key.begin(), key.end(), '-', '_');
      overrides.push_back({key, a[k].as<std::string>(), std::string("--") + k});
      m.name += std::string(" ") + k + "=" + a[k].as<std::string>();
    }
  model::apply_overrides(&m, overrides);
  return m;
}

}  // namespace lumos::cli
