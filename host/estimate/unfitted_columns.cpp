#include "estimate/unfitted_columns.hpp"

#include <stdexcept>
#include <string>

namespace lumos::estimate {

namespace {

// A column: the table's fitted row (`base`, a published-runs.json id) at `gpus` GPUs.
struct Column {
  const char* base;
  int gpus;
  int dp;
  int64_t gbs;
  double step_s;
  int64_t layers = 0;  // the 405B proxies: fewer layers, fewer pipeline stages
  int pp = 0, interleave = 0;
};

const PublishedRun& fitted_row(const char* id) {
  for (const PublishedRun& r : published_runs())
    if (r.id == id) return r;
  throw std::logic_error(std::string("unfitted columns: no published run ") + id);
}

// "dgxc Llama3.1-70B BF16, 64 GPUs" -> "dgxc Llama3.1-70B BF16, 128 GPUs".
std::string relabel(const std::string& label, int gpus, int64_t layers) {
  const size_t at = label.rfind(", ");
  if (at == std::string::npos)
    throw std::logic_error("unfitted columns: the label '" + label + "' names no GPU count");
  std::string l = label.substr(0, at) + ", " + std::to_string(gpus) + " GPUs";
  return layers > 0 ? l + " (" + std::to_string(layers) + " layers)" : l;
}

std::string with_layers(std::string model_options, int64_t layers) {
  const std::string flag = "--layers ";
  const size_t at = model_options.find(flag);
  if (at == std::string::npos)
    throw std::logic_error("unfitted columns: the model flags name no layer count");
  const size_t end = model_options.find(' ', at + flag.size());
  return model_options.replace(at + flag.size(), end - at - flag.size(), std::to_string(layers));
}

PublishedRun column_run(const Column& c, const char* source) {
  const PublishedRun& base = fitted_row(c.base);
  PublishedRun r = base;
  r.label = relabel(base.label, c.gpus, c.layers);
  r.id = base.id.substr(0, base.id.rfind('_')) + "_" + std::to_string(c.gpus) + "gpu" +
         (c.layers > 0 ? "_" + std::to_string(c.layers) + "l" : "");
  r.source = source;
  r.step_time_s = c.step_s;
  ParallelConfig& cfg = r.request.cfg;
  cfg.dp = c.dp;
  cfg.gbs = c.gbs;
  if (c.layers > 0) {
    r.request.model.layers = c.layers;
    r.model_options = with_layers(r.model_options, c.layers);
    cfg.pp = c.pp;
    cfg.interleave = c.interleave;
    // NeMo's overlap callback defers the output layer's weight gradients only with a pipeline.
    if (c.pp == 1) cfg.deferred_head_wgrads = 0;
  }
  if (cfg.gpus() != c.gpus)
    throw std::logic_error("unfitted columns: " + r.label + " is not " + std::to_string(c.gpus) +
                           " GPUs");
  r.options = options_of(r.request, r.model_options);
  return r;
}

}  // namespace

const std::vector<PublishedRun>& unfitted_columns() {
  static const std::vector<PublishedRun> runs = [] {
    // Step times (train_step_timing, s) as the tables print them; published-runs.json holds the
    // first and last full-size columns of each (only the first for 405B and 15B): 8 and 128 GPUs
    // for 8B, 64 and 2,048 for 70B, 576 for 405B, 16 for 15B, 128 and 2,048 for 340B. Global
    // batch as each README prescribes.
    constexpr const char* kLlama =
        "NVIDIA/dgxc-benchmarking llama3.1/README_{8b,70b,405b}.md at commit 8f5cbb3 (NeMo 24.12 "
        "container), Expected Performance";
    constexpr const char* kNemotron15 =
        "NVIDIA/dgxc-benchmarking nemotron/README_15b.md at commit 0b71cfd (v25.02.01), Expected "
        "Slurm Performance";
    constexpr const char* kNemotron340 =
        "NVIDIA/dgxc-benchmarking nemotron/README_340b.md at commit 143b90d (its '24.11' tables, "
        "whose 128- and 2,048-GPU columns are published-runs.json's), Expected Performance";
    const Column llama[] = {
        {"dgxc_llama31_8b_bf16_8gpu", 16, 8, 256, 12.99},
        {"dgxc_llama31_8b_bf16_8gpu", 32, 16, 512, 13.00},
        {"dgxc_llama31_8b_bf16_8gpu", 64, 32, 1024, 13.00},
        {"dgxc_llama31_8b_fp8_8gpu", 16, 8, 256, 9.47},
        {"dgxc_llama31_8b_fp8_8gpu", 32, 16, 512, 9.60},
        {"dgxc_llama31_8b_fp8_8gpu", 64, 32, 1024, 9.64},
        {"dgxc_llama31_70b_bf16_64gpu", 128, 4, 256, 14.70},
        {"dgxc_llama31_70b_bf16_64gpu", 256, 8, 512, 14.72},
        {"dgxc_llama31_70b_bf16_64gpu", 512, 16, 1024, 14.80},
        {"dgxc_llama31_70b_bf16_64gpu", 1024, 32, 2048, 14.86},
        {"dgxc_llama31_70b_fp8_64gpu", 128, 4, 256, 10.52},
        {"dgxc_llama31_70b_fp8_64gpu", 256, 8, 512, 10.75},
        {"dgxc_llama31_70b_fp8_64gpu", 512, 16, 1024, 10.76},
        {"dgxc_llama31_70b_fp8_64gpu", 1024, 32, 2048, 10.83},
        // The 405B recipe's proxies keep TP 8, CP 2 and (with a pipeline) 7 virtual stages.
        {"dgxc_llama31_405b_bf16_576gpu", 32, 2, 126, 9.00, 7, 1, 1},
        {"dgxc_llama31_405b_bf16_576gpu", 96, 2, 126, 8.87, 21, 3, 7},
        {"dgxc_llama31_405b_bf16_576gpu", 192, 4, 252, 17.30, 42, 3, 7},
        {"dgxc_llama31_405b_bf16_576gpu", 1152, 8, 504, 17.60},
        {"dgxc_llama31_405b_bf16_576gpu", 2304, 16, 1008, 17.70},
        {"dgxc_llama31_405b_fp8_576gpu", 32, 2, 126, 5.75, 7, 1, 1},
        {"dgxc_llama31_405b_fp8_576gpu", 96, 2, 126, 5.63, 21, 3, 7},
        {"dgxc_llama31_405b_fp8_576gpu", 192, 4, 252, 10.8, 42, 3, 7},
        {"dgxc_llama31_405b_fp8_576gpu", 1152, 8, 504, 11.10},
        {"dgxc_llama31_405b_fp8_576gpu", 2304, 16, 1008, 11.20},
    };
    const Column nemotron15[] = {
        {"dgxc_nemotron4_15b_bf16_16gpu", 32, 8, 128, 2.824},
        {"dgxc_nemotron4_15b_bf16_16gpu", 64, 16, 256, 2.845},
        {"dgxc_nemotron4_15b_bf16_16gpu", 128, 32, 512, 2.859},
        {"dgxc_nemotron4_15b_bf16_16gpu", 256, 64, 1024, 2.852},
        {"dgxc_nemotron4_15b_bf16_16gpu", 512, 128, 2048, 2.875},
        {"dgxc_nemotron4_15b_bf16_16gpu", 1024, 256, 4096, 2.895},
        {"dgxc_nemotron4_15b_bf16_16gpu", 2048, 512, 8192, 2.887},
        {"dgxc_nemotron4_15b_fp8_16gpu", 32, 8, 128, 2.046},
        {"dgxc_nemotron4_15b_fp8_16gpu", 64, 16, 256, 2.048},
        {"dgxc_nemotron4_15b_fp8_16gpu", 128, 32, 512, 2.059},
        {"dgxc_nemotron4_15b_fp8_16gpu", 256, 64, 1024, 2.075},
        {"dgxc_nemotron4_15b_fp8_16gpu", 512, 128, 2048, 2.12},
        {"dgxc_nemotron4_15b_fp8_16gpu", 1024, 256, 4096, 2.094},
        {"dgxc_nemotron4_15b_fp8_16gpu", 2048, 512, 8192, 2.12},
    };
    const Column nemotron340[] = {
        {"dgxc_nemotron4_340b_bf16_128gpu", 256, 4, 64, 4.67},
        {"dgxc_nemotron4_340b_bf16_128gpu", 512, 8, 128, 4.70},
        {"dgxc_nemotron4_340b_bf16_128gpu", 1024, 16, 256, 4.73},
        {"dgxc_nemotron4_340b_fp8_128gpu", 256, 4, 64, 3.21},
        {"dgxc_nemotron4_340b_fp8_128gpu", 512, 8, 128, 3.26},
        {"dgxc_nemotron4_340b_fp8_128gpu", 1024, 16, 256, 3.34},
    };
    std::vector<PublishedRun> v;
    for (const Column& c : llama) v.push_back(column_run(c, kLlama));
    for (const Column& c : nemotron15) v.push_back(column_run(c, kNemotron15));
    for (const Column& c : nemotron340) v.push_back(column_run(c, kNemotron340));
    return v;
  }();
  return runs;
}

}  // namespace lumos::estimate
