#include "report/whatif_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/peer_waits_report.hpp"

namespace lumos::report {

void whatif_text(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a) {
  const replay::VariantBatch& b = a.grid.batch;
  const replay::BatchResult& r = a.result;
  os << strprintf(
      "lumos whatif: %s, traced on %s, %u variants (%s backend); %u GEMM kernels priced by the "
      "cost model\n\n",
      input.c_str(), a.traced_gpu.c_str(), b.count, r.backend.c_str(), a.gemm_kernels_priced);
  if (!a.edits.empty()) {
    os << "edits of the traced job:\n";
    for (const auto& e : a.edits)
      os << strprintf("  %s: %u kernels, %.1f us -> %.1f us\n", e.what.c_str(), e.kernels,
                      e.traced_us, e.edited_us);
    os << strprintf(
        "traced job replayed: %.1f us; edited job (first variant): %.1f us (%+.2f%%)\n\n",
        a.unedited_us, a.step_us[0],
        a.unedited_us > 0 ? (a.step_us[0] / a.unedited_us - 1) * 100 : 0.0);
  }
  os << strprintf("%-32s %14s %12s %14s %12s  %s\n", "variant", "replayed_us", "energy_J",
                  "cp_compute_us", "cp_comm_us", "pareto");
  for (uint32_t v = 0; v < b.count; ++v)
    os << strprintf("%-32s %14.1f %12.3f %14.1f %12.1f  %s\n", b.labels[v].c_str(), a.step_us[v],
                    a.energy_j[v], a.cp_compute_us[v], a.cp_comm_us[v], a.on_front[v] ? "*" : "");
}

void whatif_json(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a) {
  const replay::VariantBatch& b = a.grid.batch;
  const replay::BatchResult& r = a.result;
  common::JsonWriter w(os);
  w.begin_object()
      .field("input", input)
      .field("traced_gpu", a.traced_gpu)
      .field("backend", r.backend)
      .field("gemm_kernels_priced", a.gemm_kernels_priced);
  if (!a.edits.empty()) {
    w.field("unedited_us", a.unedited_us);
    w.key("edits").begin_array();
    for (const auto& e : a.edits)
      w.begin_object()
          .field("what", e.what)
          .field("kernels", static_cast<uint64_t>(e.kernels))
          .field("traced_us", e.traced_us)
          .field("edited_us", e.edited_us)
          .end_object();
    w.end_array();
  }
  w.key("variants").begin_array();
  for (uint32_t v = 0; v < b.count; ++v) {
    w.begin_object()
        .field("label", b.labels[v])
        .field("gpu", a.grid.variant_gpu[v])
        .field("replayed_us", a.step_us[v])
        .field("energy_j", a.energy_j[v]);
    w.field("cp_compute_us", a.cp_compute_us[v])
        .field("cp_comm_us", a.cp_comm_us[v])
        .field("pareto", static_cast<bool>(a.on_front[v]));
    w.end_object();
  }
  w.end_array().end_object();
  os << '\n';
}

void whatif_csv(std::ostream& os, const estimate::WhatifAnswer& a) {
  const replay::VariantBatch& b = a.grid.batch;
  os << "variant,replayed_us,energy_j,cp_compute_us,cp_comm_us,pareto\n";
  for (uint32_t v = 0; v < b.count; ++v)
    os << '"' << b.labels[v] << "\"," << a.step_us[v] << ',' << a.energy_j[v] << ','
       << a.cp_compute_us[v] << ',' << a.cp_comm_us[v] << ',' << (a.on_front[v] ? 1 : 0) << '\n';
}

namespace {

std::string degree(int d) {
  return d > 0 ? std::to_string(d) : std::string("unknown");
}

}  // namespace

void job_structure_text(std::ostream& os, const std::string& input, const whatif::JobStructure& js,
                        const whatif::PeerWaits* waits) {
  os << strprintf("lumos whatif --describe: %s (%zu traced ranks of a world of %s)\n\n",
                  input.c_str(), js.traced_ranks.size(), degree(js.world_size).c_str());
  os << strprintf("degrees: tp %s, cp %s, dp %s, pp %s", degree(js.tp).c_str(),
                  degree(js.cp).c_str(), degree(js.dp).c_str(), degree(js.pp).c_str());
  os << " (pp: " << js.pp_from << ")\n";
  if (js.forward_only)
    os << "passes: forward only (no autograd operator, backward or optimizer kernel)\n";
  for (const auto& d : js.disagreements) os << "evidence disagrees: " << d << '\n';
  for (const auto& o : js.overridden) os << "given: " << o << '\n';
  os << "\nprocess groups:\n";
  for (size_t i = 0; i < js.groups.size(); ++i) {
    const auto& g = js.groups[i];
    os << strprintf("  #%-2zu %-20s %-44s size %s (%s); role from %s\n", i, g.name.c_str(),
                    whatif::to_string(g.role), degree(g.size).c_str(), g.size_from.c_str(),
                    g.role_from.c_str());
    for (const auto& [type, ops] : g.ops)
      os << strprintf("      %-16s %6u kernels %14.1f us %16.0f bytes\n", trace::to_string(type),
                      ops.kernels, ops.traced_us, ops.bytes);
  }
  if (js.groups.empty()) os << "  none\n";
  os << strprintf(
      "\nrank %d, first step: %u kernels on the compute stream, %u pipeline sends and "
      "receives\n",
      js.described_rank, js.compute_kernels, js.p2p_kernels);
  auto pattern = [&](const char* what, const whatif::RepeatPattern& p) {
    if (p.period == 0) return;
    os << strprintf(
        "%s: a block of %u kernels repeated up to %u times (layers per pass), in %u stretches "
        "(passes: micro-batches x model chunks), first at kernel %u\n",
        what, p.period, p.repeats, p.runs, p.first_kernel);
    for (const auto& k : p.kernels)
      os << strprintf("    %-12s %10.1f us  %-28s %s\n", k.kernel_class.c_str(), k.dur_us,
                      k.shape.c_str(), k.name.substr(0, 80).c_str());
  };
  pattern("forward layers", js.forward);
  pattern("backward layers", js.backward);
  if (!js.missing.empty()) {
    os << "\nnot found:\n";
    for (const auto& m : js.missing) os << "  " << m << '\n';
  }
  if (waits) peer_waits_text(os, *waits);
}

void job_structure_json(std::ostream& os, const std::string& input, const whatif::JobStructure& js,
                        const whatif::PeerWaits* waits) {
  common::JsonWriter w(os);
  w.begin_object().field("input", input).field("world_size", static_cast<int64_t>(js.world_size));
  w.key("traced_ranks").begin_array();
  for (int32_t r : js.traced_ranks) w.value(static_cast<int64_t>(r));
  w.end_array();
  w.field("tp", static_cast<int64_t>(js.tp)).field("cp", static_cast<int64_t>(js.cp));
  w.field("dp", static_cast<int64_t>(js.dp)).field("pp", static_cast<int64_t>(js.pp));
  w.field("pp_from", js.pp_from);
  w.field("forward_only", js.forward_only);
  for (const auto* lines : {&js.disagreements, &js.overridden}) {
    w.key(lines == &js.disagreements ? "disagreements" : "overridden").begin_array();
    for (const auto& l : *lines) w.value(l);
    w.end_array();
  }
  w.key("groups").begin_array();
  for (const auto& g : js.groups) {
    w.begin_object().field("name", g.name).field("role", whatif::to_string(g.role));
    w.field("size", static_cast<int64_t>(g.size)).field("size_from", g.size_from);
    w.field("role_from", g.role_from);
    w.key("collectives").begin_array();
    for (const auto& [type, ops] : g.ops)
      w.begin_object()
          .field("type", trace::to_string(type))
          .field("kernels", static_cast<uint64_t>(ops.kernels))
          .field("traced_us", ops.traced_us)
          .field("bytes", ops.bytes)
          .end_object();
    w.end_array().end_object();
  }
  w.end_array();
  w.field("described_rank", static_cast<int64_t>(js.described_rank));
  w.field("compute_kernels", static_cast<uint64_t>(js.compute_kernels));
  w.field("p2p_kernels", static_cast<uint64_t>(js.p2p_kernels));
  for (const auto* p : {&js.forward, &js.backward}) {
    w.key(p == &js.forward ? "forward_layers" : "backward_layers").begin_object();
    w.field("period", static_cast<uint64_t>(p->period))
        .field("repeats", static_cast<uint64_t>(p->repeats))
        .field("runs", static_cast<uint64_t>(p->runs))
        .field("first_kernel", static_cast<uint64_t>(p->first_kernel));
    w.key("kernels").begin_array();
    for (const auto& k : p->kernels)
      w.begin_object()
          .field("name", k.name)
          .field("class", k.kernel_class)
          .field("dur_us", k.dur_us)
          .field("shape", k.shape)
          .end_object();
    w.end_array().end_object();
  }
  w.key("missing").begin_array();
  for (const auto& m : js.missing) w.value(m);
  w.end_array();
  if (waits) {
    w.key("comm_waits");
    peer_waits_json(w, *waits);
  }
  w.end_object();
  os << '\n';
}

}  // namespace lumos::report
