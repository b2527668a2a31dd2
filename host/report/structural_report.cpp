#include "report/structural_report.hpp"

#include "common/format.hpp"
#include "common/json_writer.hpp"
#include "report/estimate_report.hpp"

namespace lumos::report {

namespace {

std::string config_text(const estimate::StructuralAnswer& a) {
  const model::ParallelConfig& c = a.traced.cfg;
  std::string text = strprintf(
      "%s, %lld layers: TP %d x CP %d x PP %d x DP %d, interleave %d", a.traced.model.name.c_str(),
      static_cast<long long>(a.traced.model.layers), c.tp, c.cp, c.pp, c.dp, c.interleave);
  // Without a model the batch is known only where --traced gives it.
  if (c.mbs > 0) text += strprintf(", mbs %lld", static_cast<long long>(c.mbs));
  if (c.gbs > 0) text += strprintf(", gbs %lld", static_cast<long long>(c.gbs));
  return text;
}

std::string edits_text(const estimate::StructuralAnswer& a) {
  if (a.edits.empty()) return "none (the traced configuration)";
  std::string text;
  for (size_t i = 0; i < a.edits.size(); ++i) text += (i ? ", " : "") + a.edits[i];
  return text;
}

double pct(double x, double ref) {
  return ref > 0 ? (x / ref - 1) * 100 : 0.0;
}

}  // namespace

void structural_text(std::ostream& os, const std::string& input,
                     const estimate::StructuralAnswer& a) {
  os << strprintf("lumos whatif: %s\n  traced    %s\n", input.c_str(), config_text(a).c_str());
  for (const auto& s : a.traced.assumed) os << "  assumed   " << s << '\n';
  if (!a.model_given) {
    os << "  edits     " << edits_text(a);
    os << strprintf(
        "\n  path      %s\n  predicted step %.1f us (%+.2f%% from the traced replay of %.1f "
        "us)\n",
        a.path.c_str(), a.predicted_us, pct(a.predicted_us, a.trace_replay_us), a.trace_replay_us);
    return;
  }
  os << strprintf(
      "  check     the traced job replays in %.1f us; the model's graph of its configuration, "
      "calibrated on the trace, in %.1f us (%+.2f%%)\n",
      a.trace_replay_us, a.calibrated_traced_us, pct(a.calibrated_traced_us, a.trace_replay_us));
  os << "  calibration (traced / model time):";
  for (const char* key : {"gemm", "comm"})
    os << strprintf(" %s x%.3f", key, a.calibration.factor(key));
  for (const auto& [key, us] : a.calibration.traced_us)
    if (key.rfind("class ", 0) == 0)
      os << strprintf(" %s x%.3f", key.substr(6).c_str(), a.calibration.factor(key));
  if (a.calibration.comm_recorded_us > 0)
    os << strprintf(
        "\n  waits     %.1f us of the calibrated step's %.1f us of communication (%.1f%%) waited "
        "for peers: left out, the calibration counts transfers",
        a.calibration.comm_waited_us, a.calibration.comm_recorded_us,
        a.calibration.comm_waited_us / a.calibration.comm_recorded_us * 100.0);
  os << "\n  edits     " << edits_text(a);
  const bool on_trace = a.path.rfind("traced-graph", 0) == 0;
  os << "\n  path      " << a.path;
  if (on_trace)
    os << strprintf("\n  rebuild   the model's rebuild of the edit predicts %.1f us", a.rebuild_us);
  os << strprintf("\n  predicted step %.1f us (%+.2f%% from the traced replay)\n\n", a.predicted_us,
                  pct(a.predicted_us, a.trace_replay_us));
  // The rebuild's memory, breakdown and cost (the traced graph knows no memory).
  if (on_trace) os << "the model's rebuild of the edited configuration:\n";
  estimate_text(os, a.edited.estimate);
}

void structural_json(std::ostream& os, const std::string& input,
                     const estimate::StructuralAnswer& a) {
  common::JsonWriter w(os);
  w.begin_object();
  // Without a model there is no rebuild: no estimate, no calibration.
  if (a.model_given) estimate_fields(w, a.edited.estimate);
  w.key("trace_whatif").begin_object().field("input", input);
  const model::ParallelConfig& c = a.traced.cfg;
  w.key("traced").begin_object().field("model", a.traced.model.name);
  w.field("layers", a.traced.model.layers).field("tp", c.tp).field("cp", c.cp).field("pp", c.pp);
  w.field("dp", c.dp).field("interleave", c.interleave);
  if (c.mbs > 0) w.field("mbs", c.mbs);  // without a model, only where --traced gives them
  if (c.gbs > 0) w.field("gbs", c.gbs);
  w.key("assumed").begin_array();
  for (const auto& s : a.traced.assumed) w.value(s);
  w.end_array().end_object();
  w.field("trace_replay_us", a.trace_replay_us);
  if (a.model_given) {
    w.field("calibrated_traced_us", a.calibrated_traced_us);
    w.field("comm_recorded_us", a.calibration.comm_recorded_us);
    w.field("comm_waited_us", a.calibration.comm_waited_us);
  }
  w.field("predicted_us", a.predicted_us);
  w.field("path", a.path);
  if (a.model_given) w.field("rebuild_predicted_us", a.rebuild_us);
  w.key("edits").begin_array();
  for (const auto& e : a.edits) w.value(e);
  w.end_array();
  w.key("calibration").begin_object();
  for (const auto& [key, us] : a.calibration.traced_us) w.field(key, a.calibration.factor(key));
  w.end_object().end_object().end_object();
  os << '\n';
}

}  // namespace lumos::report
