// lumos cost collective: the time of an NCCL collective with NCCL's algorithm and protocol model
// (cmd_cost.cpp dispatches to it).
#pragma once

namespace lumos::cli {

int cost_collective(int argc, char** argv);

}  // namespace lumos::cli
