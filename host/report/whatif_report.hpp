// Renders a what-if answer: a table, JSON, or CSV (one row per variant).
#pragma once
#include <ostream>
#include <string>

#include "estimate/trace_whatif.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::report {

void whatif_text(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a);
void whatif_json(std::ostream& os, const std::string& input, const estimate::WhatifAnswer& a);
void whatif_csv(std::ostream& os, const estimate::WhatifAnswer& a);

// `lumos whatif --describe`: the job found in the traces, and what could not be found; with
// `waits`, how much of the traced communication time was waiting for peers.
void job_structure_text(std::ostream& os, const std::string& input, const whatif::JobStructure& js,
                        const whatif::PeerWaits* waits = nullptr);
void job_structure_json(std::ostream& os, const std::string& input, const whatif::JobStructure& js,
                        const whatif::PeerWaits* waits = nullptr);

}  // namespace lumos::report
