#include "carbon/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <toml++/toml.h>

#include "carbon/placement.hpp"
#include "common/csv_table.hpp"
#include "common/error.hpp"
#include "common/format.hpp"
#include "common/physical_ranges.hpp"
#include "model/model_toml.hpp"

namespace lumos::carbon {

namespace {

std::string where(const std::string& path, const toml::node& n, const std::string& key) {
  return path + ":" + std::to_string(n.source().begin.line) + ": " + key;
}

// A number field (integer or float) at least `min`; `required` or absent (then `fallback`).
double number(const toml::table& t, const std::string& path, const std::string& key, double min,
              bool required, double fallback = 0) {
  const toml::node* n = t.get(key);
  if (!n) {
    LUMOS_EXPECT(!required, path + ":" + std::to_string(t.source().begin.line) + ": " + key +
                                ": missing (a number is required)");
    return fallback;
  }
  std::optional<double> v;
  if (const auto* i = n->as_integer()) v = static_cast<double>(i->get());
  if (const auto* f = n->as_floating_point()) v = f->get();
  LUMOS_EXPECT(v && std::isfinite(*v), where(path, *n, key) + ": expected a number");
  LUMOS_EXPECT(*v >= min, where(path, *n, key) + ": expected at least " + strprintf("%g", min) +
                              ", got " + strprintf("%g", *v));
  return *v;
}

// A number field inside one of the shared physical ranges (common/physical_ranges.hpp).
double ranged(const toml::table& t, const std::string& path, const std::string& key,
              const PhysicalRange& range, bool required, double fallback = 0) {
  const double v = number(t, path, key, -HUGE_VAL, required, fallback);
  if (const toml::node* n = t.get(key)) expect_in_range(range, v, where(path, *n, key));
  return v;
}

// A count: a whole number from 1 to 10^6.
int64_t count_of(const toml::table& t, const std::string& path, bool required) {
  const double v = number(t, path, "count", 1, required, 1);
  LUMOS_EXPECT(v == std::floor(v) && v <= 1e6,
               where(path, *t.get("count"), "count") + ": expected a whole number up to 1000000");
  return static_cast<int64_t>(v);
}

std::string text(const toml::table& t, const std::string& path, const std::string& key,
                 bool required) {
  const toml::node* n = t.get(key);
  if (!n) {
    LUMOS_EXPECT(!required, path + ":" + std::to_string(t.source().begin.line) + ": " + key +
                                ": missing (a string is required)");
    return "";
  }
  const auto* s = n->as_string();
  LUMOS_EXPECT(s && !s->get().empty(), where(path, *n, key) + ": expected a non-empty string");
  return s->get();
}

void only_keys(const toml::table& t, const std::string& path, const std::string& table,
               const std::vector<std::string>& keys) {
  for (const auto& [k, n] : t)
    if (std::find(keys.begin(), keys.end(), std::string(k.str())) == keys.end()) {
      std::string list;
      for (const auto& key : keys) {
        if (!list.empty()) list += ", ";
        list += key;
      }
      throw InputError(where(path, n, std::string(k.str())) + ": unknown key in " + table +
                       " (expected " + list + ")");
    }
}

const toml::array& tables(const toml::table& root, const std::string& path,
                          const std::string& key) {
  const toml::node* n = root.get(key);
  LUMOS_EXPECT(n, path + ": no [[" + key + "]] tables");
  const auto* a = n->as_array();
  LUMOS_EXPECT(a && !a->empty() && a->is_array_of_tables(),
               where(path, *n, key) + ": expected [[" + key + "]] tables");
  return *a;
}

}  // namespace

size_t Fleet::pool(const std::string& n) const {
  for (size_t k = 0; k < pools.size(); ++k)
    if (pools[k].name == n) return k;
  throw InputError("place: no server type named '" + n + "' in fleet " + name);
}

Fleet load_fleet(const std::string& path) {
  const toml::table root = model::parse_toml_file(path, "fleet");
  only_keys(root, path, "the file", {"fleet", "server"});
  Fleet f;
  f.name = path;
  double reference_year = 0;
  double servers = 0;
  if (const toml::node* n = root.get("fleet")) {
    const auto* t = n->as_table();
    LUMOS_EXPECT(t, where(path, *n, "fleet") + ": expected a [fleet] table");
    only_keys(*t, path, "[fleet]",
              {"name", "grid_g_per_kwh", "pue", "whole_resources", "reference_year", "source"});
    if (t->get("name")) f.name = text(*t, path, "name", true);
    f.grid_g_per_kwh = ranged(*t, path, "grid_g_per_kwh", kGridIntensityRange, false, -1);
    f.pue = ranged(*t, path, "pue", kPueRange, false, 1);
    reference_year = number(*t, path, "reference_year", 1900, false, 0);
    if (const toml::node* w = t->get("whole_resources")) {
      const auto* b = w->as_boolean();
      LUMOS_EXPECT(b, where(path, *w, "whole_resources") + ": expected true or false");
      f.whole_resources = b->get();
    }
  }
  for (const toml::node& n : tables(root, path, "server")) {
    const toml::table& t = *n.as_table();
    only_keys(t, path, "[[server]]",
              {"name", "gpu", "count", "resources", "score", "idle_w", "max_w", "embodied_kg",
               "age_y", "year", "lifetime_y", "source"});
    ServerPool p;
    p.name = text(t, path, "name", true);
    for (const ServerPool& q : f.pools)
      LUMOS_EXPECT(q.name != p.name,
                   where(path, n, "name") + ": server type " + p.name + " is given twice");
    p.gpu = text(t, path, "gpu", false);
    p.count = count_of(t, path, true);
    p.resources = number(t, path, "resources", 1, true);
    p.score = number(t, path, "score", 0, false);
    p.idle_w = ranged(t, path, "idle_w", kServerPowerRange, false);
    p.max_w = ranged(t, path, "max_w", kServerPowerRange, true);
    LUMOS_EXPECT(p.max_w >= p.idle_w, where(path, n, "max_w") + ": below idle_w");
    p.embodied_g = ranged(t, path, "embodied_kg", kEmbodiedRange, true) * 1000.0;
    p.lifetime_y = ranged(t, path, "lifetime_y", kLifetimeRange, false, 5);
    const bool has_age = t.get("age_y") != nullptr, has_year = t.get("year") != nullptr;
    LUMOS_EXPECT(has_age != has_year,
                 where(path, n, p.name) + ": give its age as age_y or year (one of them)");
    if (has_age) {
      p.age_y = ranged(t, path, "age_y", kAgeRange, true);
    } else {
      LUMOS_EXPECT(reference_year > 0,
                   where(path, n, "year") + ": needs [fleet] reference_year to give an age");
      const double year = number(t, path, "year", 1900, true);
      LUMOS_EXPECT(year <= reference_year,
                   where(path, n, "year") + ": after the fleet's reference_year");
      p.age_y = expect_in_range(kAgeRange, reference_year - year,
                                where(path, *t.get("year"), "year") + " (reference_year - year)");
    }
    f.pools.push_back(p);
    servers += static_cast<double>(p.count);
    LUMOS_EXPECT(static_cast<double>(f.pools.size()) <= kMaxServerTypes,
                 where(path, n, "name") + ": more than " + strprintf("%.0f", kMaxServerTypes) +
                     " server types");
    LUMOS_EXPECT(servers <= kMaxFleetServers, where(path, n, "count") + ": the fleet passes " +
                                                  strprintf("%.0f", kMaxFleetServers) +
                                                  " servers over all its types");
  }
  return f;
}

Job job_from_score(const Fleet& f, const std::string& name, double score, double hours) {
  LUMOS_EXPECT(score > 0 && std::isfinite(score),
               "place: job " + name + ": score must be positive");
  LUMOS_EXPECT(hours > 0 && std::isfinite(hours),
               "place: job " + name + ": hours must be positive");
  Job j;
  j.name = name;
  for (size_t k = 0; k < f.pools.size(); ++k) {
    const ServerPool& p = f.pools[k];
    if (p.score <= 0) continue;
    double r = score / (p.score / p.resources);
    // Whole cores: the paper's 1168-score job takes 1 core of S_A (1168 each) or 2 of S_B (701).
    if (f.whole_resources) r = std::ceil(r * (1 - 1e-12));
    j.options.push_back({k, r, hours, p.name});
  }
  LUMOS_EXPECT(!j.options.empty(), "place: job " + name +
                                       " is given as a score, and no server "
                                       "type of the fleet has one");
  return j;
}

std::vector<Job> load_jobs(const std::string& path, const Fleet& f) {
  const toml::table root = model::parse_toml_file(path, "jobs");
  only_keys(root, path, "the file", {"job"});
  std::vector<Job> jobs;
  double total_jobs = 0, total_options = 0;
  for (const toml::node& n : tables(root, path, "job")) {
    const toml::table& t = *n.as_table();
    only_keys(t, path, "[[job]]", {"name", "count", "score", "hours", "option"});
    const std::string name = text(t, path, "name", true);
    const int64_t count = count_of(t, path, false);
    Job j;
    if (const toml::node* o = t.get("option")) {
      LUMOS_EXPECT(!t.get("score"), where(path, n, name) + ": give score or options, not both");
      const auto* a = o->as_array();
      LUMOS_EXPECT(a && a->is_array_of_tables() && !a->empty(),
                   where(path, *o, "option") + ": expected [[job.option]] tables");
      j.name = name;
      for (const toml::node& on : *a) {
        const toml::table& ot = *on.as_table();
        only_keys(ot, path, "[[job.option]]", {"pool", "resources", "hours", "label"});
        JobOption opt;
        const std::string pool = text(ot, path, "pool", true);
        try {
          opt.pool = f.pool(pool);
        } catch (const InputError& e) {
          throw InputError(where(path, on, "pool") + ": " + e.what());
        }
        opt.resources = number(ot, path, "resources", 1e-9, true);
        opt.hours = ranged(ot, path, "hours", kJobHoursRange, true);
        opt.label = ot.get("label") ? text(ot, path, "label", true) : pool;
        j.options.push_back(opt);
      }
    } else {
      const double score = number(t, path, "score", 1e-9, true);
      const double hours = ranged(t, path, "hours", kJobHoursRange, true);
      j = job_from_score(f, name, score, hours);
    }
    // Counted before the copies are made: a file of 40 x 10^6 jobs is refused at once.
    total_jobs += static_cast<double>(count);
    total_options += static_cast<double>(count) * static_cast<double>(j.options.size());
    check_placement_size(f, total_jobs, total_options, 1, path);
    for (int64_t i = 0; i < count; ++i) {
      jobs.push_back(j);
      if (count > 1) jobs.back().name += " #" + std::to_string(i + 1);
    }
  }
  return jobs;
}

Job job_from_sweep_csv(const std::string& path, const Fleet& f, const std::string& name) {
  const CsvTable t = read_csv(path);
  const size_t gpu = t.column("gpu"), gpus = t.column("gpus"), hours = t.column("time_to_train_h"),
               feasible = t.column("feasible"), tp = t.column("tp"), pp = t.column("pp"),
               dp = t.column("dp");
  Job j;
  j.name = name;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    if (row[feasible] != "1") continue;
    for (size_t k = 0; k < f.pools.size(); ++k) {
      if (f.pools[k].gpu != row[gpu]) continue;
      JobOption o;
      o.pool = k;
      const std::string at = path + ": row " + std::to_string(r + 1) + ": ";
      o.resources = parse_finite(row[gpus]).value_or(0);
      o.hours = parse_finite(row[hours]).value_or(0);
      LUMOS_EXPECT(o.resources > 0 && o.hours > 0,
                   at + "gpus and time_to_train_h: expected positive numbers");
      o.label = row[gpu] + " TP" + row[tp] + " PP" + row[pp] + " DP" + row[dp];
      j.options.push_back(o);
    }
  }
  if (j.options.empty()) {
    // Name both sides: a fleet's gpu is free text (a sweep run with --db may name GPUs of its
    // own), so a misspelling shows only here.
    std::set<std::string> fleet_gpus, csv_gpus;
    for (const ServerPool& p : f.pools)
      if (!p.gpu.empty()) fleet_gpus.insert(p.gpu);
    for (const auto& row : t.rows)
      if (row[feasible] == "1") csv_gpus.insert(row[gpu]);
    auto list = [](const std::set<std::string>& names) {
      std::string out;
      for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
      return out.empty() ? std::string("none") : out;
    };
    throw InputError(path + ": no feasible row runs on a GPU of fleet " + f.name +
                     " (its server types name their GPUs with gpu = \"...\": " + list(fleet_gpus) +
                     "; the CSV's feasible rows: " + list(csv_gpus) + ")");
  }
  return j;
}

}  // namespace lumos::carbon
