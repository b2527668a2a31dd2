// How much of the traced communication time was waiting for peers (whatif/peer_waits.hpp), as a
// line of `lumos replay` and `lumos whatif --describe` text and a `comm_waits` JSON object.
#pragma once
#include <ostream>

#include "common/json_writer.hpp"
#include "whatif/peer_waits.hpp"

namespace lumos::report {

// Nothing when the trace has no communication kernel.
void peer_waits_text(std::ostream& os, const whatif::PeerWaits& w);
// The object's value (after w.key("comm_waits")).
void peer_waits_json(common::JsonWriter& w, const whatif::PeerWaits& waits);

}  // namespace lumos::report
