// The sites of a step graph's parameter-sized kernels, in the order and with the arithmetic the
// builder uses (training_schedule.cpp reads its counts from here), so that a plan of another
// configuration gives exactly the counts its own graph would have.
#include "model/param_plan.hpp"

#include <algorithm>
#include <map>

#include "model/step_graph.hpp"

namespace lumos::model {
namespace {

// Sites [begin, end) with equal counts get the first one's label.
void label_group(ParamPlan* p, size_t begin, size_t end) {
  std::map<double, uint32_t> first;
  for (size_t s = begin; s < end; ++s)
    p->label[s] = first.emplace(p->value[s], static_cast<uint32_t>(s)).first->second;
}

// A chunk's gradient buckets: its backward adds the head (last virtual stage), then each layer
// from the last (the first also the embedding), then flushes; a bucket is reduced once full.
// Every chunk has a layer (check_layout).
void grad_buckets(const ParamPlan& p, int64_t j, int64_t last_vs, int64_t layers,
                  double bucket_params, std::vector<double>* value, std::vector<uint32_t>* close) {
  double filled = 0;
  uint32_t term = 0;
  auto add = [&](double params, bool flush) {
    filled += params;
    if (filled >= bucket_params || (flush && filled > 0)) {
      value->push_back(filled);
      close->push_back(term);
      filled = 0;
    }
    ++term;
  };
  if (j == last_vs) add(p.head, false);
  for (int64_t i = layers - 1; i >= 0; --i) add(p.layer + (j == 0 && i == 0 ? p.embed : 0), false);
  add(0, true);
}

// A chunk's gathered buckets: its gradient buckets (Megatron's distributed optimizer gathers the
// updated parameters in the buckets of the buffer their gradients were reduced in) in forward
// order, each with its end as a parameter offset in the chunk, and the first wait of its first
// forward (embedding, layer i at 1 + i, the end) that waits for each. A bucket ends where its
// last layer does (layer_end, the offsets the builder's waits compare with, to the bit), or with
// the head at the chunk's end.
void gather_buckets(const ParamPlan& p, int64_t j, int64_t last_vs, int64_t layers,
                    double bucket_params, std::vector<double>* value, std::vector<double>* ends,
                    std::vector<uint32_t>* wait) {
  std::vector<double> grads;
  std::vector<uint32_t> closes;
  grad_buckets(p, j, last_vs, layers, bucket_params, &grads, &closes);
  // The backward's terms: the head (last virtual stage), layers last to first, the flush. Term t
  // is layer (layers - 1 - (t - head)).
  const uint32_t head = j == last_vs ? 1 : 0;
  const double chunk = p.layer_end(j, layers - 1) + (head ? p.head : 0);
  auto end_of = [&](size_t b) {  // bucket b (backward order) ends after its first term
    const uint32_t first_term = b == 0 ? 0 : closes[b - 1] + 1;
    if (first_term < head) return chunk;
    return p.layer_end(j, layers - 1 - static_cast<int64_t>(first_term - head));
  };
  const size_t first = ends->size();
  for (size_t b = grads.size(); b-- > 0;) {
    value->push_back(grads[b]);
    ends->push_back(end_of(b));
  }
  const size_t n = ends->size() - first;
  size_t k = 0;
  auto call = [&](uint32_t index, double upto) {
    while (k < n && (k == 0 || (*ends)[first + k - 1] < upto)) wait->push_back(index), ++k;
  };
  if (j == 0) call(0, p.embed_end(j));
  for (int64_t i = 0; i < layers; ++i) call(static_cast<uint32_t>(1 + i), p.layer_end(j, i));
  call(static_cast<uint32_t>(layers + 1), 1e300);
}

}  // namespace

ParamPlan param_plan(const ModelSpec& m, const ParallelConfig& c, const Layout& l,
                     const StepCosts& costs) {
  ParamPlan p;
  const ParamCounts pc = parameter_counts(m, l.padded_vocab);
  p.layer = static_cast<double>(pc.per_layer) / c.tp;
  p.embed = static_cast<double>(pc.embedding - l.padded_vocab * m.hidden) +
            static_cast<double>(l.padded_vocab * m.hidden) / c.tp;
  p.head = static_cast<double>(pc.final_norm) +
           (!pc.tied || c.pp > 1 ? static_cast<double>(pc.output) / c.tp : 0.0);
  p.fsdp = c.fsdp && costs.dp_group > 1;
  p.reduces = !p.fsdp && costs.dp_group > 1;
  p.gathers = c.distributed_optimizer && !c.fsdp && costs.dp_group > 1;
  const int64_t vs = int64_t{c.pp} * c.interleave, last_vs = vs - 1;
  auto layers = [&](int64_t j) { return l.chunk_layers[static_cast<size_t>(j)]; };
  for (int64_t j = 0; j <= vs; ++j) {
    p.grad_first.push_back(static_cast<uint32_t>(p.value.size()));
    if (j < vs && p.reduces)
      grad_buckets(p, j, last_vs, layers(j), costs.bucket_params, &p.value, &p.grad_close);
  }
  for (int64_t j = 0; j <= vs; ++j) {
    p.gather_first.push_back(static_cast<uint32_t>(p.value.size()));
    if (j < vs && p.gathers)
      gather_buckets(p, j, last_vs, layers(j), costs.bucket_params, &p.value, &p.gather_end,
                     &p.gather_wait);
  }
  p.share_first = static_cast<uint32_t>(p.value.size());
  if (p.fsdp)
    for (const bool e : {false, true})
      for (const bool h : {false, true})
        p.value.push_back(p.layer + (e ? p.embed : 0) + (h ? p.head : 0));
  p.optimizer_first = static_cast<uint32_t>(p.value.size());
  for (int s = 0; s < c.pp; ++s) {
    double total = 0;
    for (int64_t ch = 0; ch < c.interleave; ++ch) {
      const int64_t j = ch * c.pp + s;
      total += p.layer * static_cast<double>(layers(j));
      if (j == 0) total += p.embed;
      if (j == last_vs) total += p.head;
    }
    p.value.push_back(c.distributed_optimizer || c.fsdp ? total / costs.dp_group : total);
  }
  p.label.resize(p.value.size());
  label_group(&p, 0, p.grad_first.back());
  label_group(&p, p.grad_first.back(), p.gather_first.back());
  label_group(&p, p.share_first, p.optimizer_first);
  label_group(&p, p.optimizer_first, p.value.size());
  return p;
}

bool same_param_shape(const ParamPlan& a, const ParamPlan& b) {
  return a.reduces == b.reduces && a.gathers == b.gathers && a.fsdp == b.fsdp &&
         a.grad_first == b.grad_first && a.gather_first == b.gather_first &&
         a.share_first == b.share_first && a.optimizer_first == b.optimizer_first &&
         a.grad_close == b.grad_close && a.gather_wait == b.gather_wait && a.label == b.label;
}

std::vector<double> slot_params(const StepGraph& g, const ParamPlan& plan) {
  std::vector<double> out(g.slots.size());
  for (size_t s = 0; s < out.size(); ++s) {
    const uint32_t site = s < g.slot_site.size() ? g.slot_site[s] : ParamPlan::kNoSite;
    out[s] = site == ParamPlan::kNoSite ? g.slots[s].params : plan.value[site];
  }
  return out;
}

}  // namespace lumos::model
