#include "report/build_warnings.hpp"

#include <cmath>

namespace lumos::report {

void build_warnings(std::ostream& err, const graph::BuildStats& s) {
  if (s.gpu_ops_before_launch > 0)
    err << "warning: " << s.gpu_ops_before_launch
        << " GPU ops start before their launch call (up to "
        << static_cast<long long>(std::llround(s.max_before_launch_us))
        << " us): the trace's CPU and GPU clocks disagree; launch lags and replayed times are "
           "unreliable\n";
}

}  // namespace lumos::report
