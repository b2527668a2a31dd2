#include "report/whatif_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"

namespace lumos::report {

void whatif_text(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a) {
  const replay::VariantBatch& b = a.grid.batch;
  const replay::BatchResult& r = a.result;
  os << strprintf(
      "lumos whatif: %s, traced on %s, %u variants (%s backend); %u GEMM kernels priced by the "
      "cost model\n\n",
      input.c_str(), a.traced_gpu.c_str(), b.count, r.backend.c_str(), a.gemm_kernels_priced);
  os << strprintf("%-32s %14s %12s %14s %12s  %s\n", "variant", "replayed_us", "energy_J",
                  "cp_compute_us", "cp_comm_us", "pareto");
  for (uint32_t v = 0; v < b.count; ++v)
    os << strprintf("%-32s %14.1f %12.3f %14.1f %12.1f  %s\n", b.labels[v].c_str(),
                    r.makespan_us[v], a.energy_j[v], r.cp_compute_us[v], r.cp_comm_us[v],
                    a.on_front[v] ? "*" : "");
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
  w.key("variants").begin_array();
  for (uint32_t v = 0; v < b.count; ++v) {
    w.begin_object()
        .field("label", b.labels[v])
        .field("gpu", a.grid.variant_gpu[v])
        .field("replayed_us", r.makespan_us[v])
        .field("energy_j", a.energy_j[v]);
    w.field("cp_compute_us", r.cp_compute_us[v])
        .field("cp_comm_us", r.cp_comm_us[v])
        .field("pareto", static_cast<bool>(a.on_front[v]));
    w.end_object();
  }
  w.end_array().end_object();
  os << '\n';
}

void whatif_csv(std::ostream& os, const estimate::WhatifAnswer& a) {
  const replay::VariantBatch& b = a.grid.batch;
  const replay::BatchResult& r = a.result;
  os << "variant,replayed_us,energy_j,cp_compute_us,cp_comm_us,pareto\n";
  for (uint32_t v = 0; v < b.count; ++v)
    os << '"' << b.labels[v] << "\"," << r.makespan_us[v] << ',' << a.energy_j[v] << ','
       << r.cp_compute_us[v] << ',' << r.cp_comm_us[v] << ',' << (a.on_front[v] ? 1 : 0) << '\n';
}

}  // namespace lumos::report
