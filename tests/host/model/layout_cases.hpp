// Layouts of every kind (interleaving, recomputation, distributed optimizer, FSDP, context
// parallelism, software stacks), priced on an H100, for the tests of the model's step graph.
#pragma once
#include <string>
#include <vector>

#include "cost/kernels_db.hpp"
#include "model/step_costs.hpp"
#include "model/step_graph.hpp"

namespace lumos::model::testing {

struct Case {
  std::string name, preset;
  int64_t layers;  // 0 keeps the preset's
  int tp, cp, pp, dp, interleave;
  int64_t mbs, gbs;
  Recompute recompute;
  bool sp, dist_opt, fsdp, split;
  std::string stack = "";  // "" = the default stack
};

struct Priced {
  ModelSpec m;
  ParallelConfig c;
  Layout l;
  StepCosts k;
};

inline Priced price(const Case& x) {
  const auto& db = lumos::cost::embedded_db();
  const auto& gpu = db.gpu("h100");
  Priced p;
  p.m = preset(x.preset);
  if (x.layers > 0) p.m.layers = x.layers;
  p.c.tp = x.tp, p.c.cp = x.cp, p.c.pp = x.pp, p.c.dp = x.dp, p.c.interleave = x.interleave;
  p.c.mbs = x.mbs, p.c.gbs = x.gbs, p.c.recompute = x.recompute;
  p.c.sequence_parallel = x.sp, p.c.distributed_optimizer = x.dist_opt, p.c.fsdp = x.fsdp;
  p.c.split_counts_embedding = x.split;
  p.c.stack = x.stack;
  p.l = check_layout(p.m, p.c);
  p.k = price_step(p.m, p.c, p.l, db, gpu, db.default_topology_for(gpu));
  return p;
}

// clang-format off
inline std::vector<Case> layout_cases() {
  return {
  /*    name                 preset        layers tp cp pp dp  v  mbs gbs  recompute             sp     dist   fsdp   split */
  Case{"Gpt15bDefault",      "gpt3-15b",    8,    2, 1, 2, 4, 1, 1, 16,  Recompute::kNone,      false, false, false, false},
  Case{"Gpt44bInterleaved",  "gpt3-44b",    8,    4, 1, 2, 2, 2, 1, 8,   Recompute::kNone,      true,  false, false, false},
  Case{"Gpt117bRecompute",   "gpt3-117b",   8,    8, 1, 4, 1, 1, 1, 8,   Recompute::kFull,      true,  false, false, false},
  Case{"Gpt175bDistOpt",     "gpt3-175b",   16,   8, 1, 4, 2, 2, 1, 16,  Recompute::kSelective, true,  true,  false, false},
  Case{"Llama8bMbs2DistOpt", "llama3-8b",   0,    2, 1, 2, 4, 1, 2, 32,  Recompute::kNone,      true,  true,  false, false},
  Case{"Llama8bNoDp",        "llama3-8b",   8,    1, 1, 2, 1, 2, 1, 4,   Recompute::kNone,      false, false, false, false},
  Case{"Llama70bFsdp",       "llama3-70b",  8,    8, 1, 2, 2, 2, 1, 8,   Recompute::kNone,      true,  false, true,  false},
  Case{"Llama70bFsdpNoPp",   "llama3-70b",  4,    8, 1, 1, 4, 1, 1, 8,   Recompute::kFull,      true,  false, true,  false},
  Case{"Llama70bCp",         "llama3-70b",  8,    4, 2, 2, 2, 1, 1, 8,   Recompute::kNone,      true,  true,  false, false},
  Case{"Llama405bSplit",     "llama3-405b", 14,   8, 1, 4, 2, 2, 1, 16,  Recompute::kNone,      true,  true,  false, true},
  Case{"Gpt44bMegatron2021", "gpt3-44b",    8,    4, 1, 4, 2, 1, 1, 16,  Recompute::kSelective, false, false, false, false, "megatron-2021"},
  Case{"Gpt44bDeepspeed",    "gpt3-44b",    8,    4, 1, 2, 2, 2, 1, 8,   Recompute::kFull,      false, true,  false, false, "megatron-deepspeed"},
  Case{"Llama8bTorchtitan",  "llama3-8b",   8,    2, 1, 1, 4, 1, 1, 8,   Recompute::kSelective, true,  false, true,  false, "torchtitan"}};
}
// clang-format on

}  // namespace lumos::model::testing
