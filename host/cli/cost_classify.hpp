// lumos cost classify: a trace's GPU time by kernel class, the cost model beside the measured
// kernels (cmd_cost.cpp dispatches to it).
#pragma once

namespace lumos::cli {

int cost_classify(int argc, char** argv);

}  // namespace lumos::cli
