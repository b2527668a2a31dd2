// The two-objective Pareto front as Thrust algorithms: sort by (o0, o1); within each group of
// equal o0 keep the points equal to the group's least o1; keep a group when that least o1 is
// below every earlier group's (an exclusive min-scan over groups). Same rule as the host
// (replay/pareto.hpp). Thrust's device system decides where it runs: CUDA in
// cuda/pareto_cuda.cu, the CPP host system in tests/cuda/pareto_thrust_host_test.cpp, so the
// device code is tested on machines without a GPU. No CUDA runtime call here.
#pragma once
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/hd.hpp"

namespace lumos::cuda {

struct ParetoMinOp {
  LUMOS_HD double operator()(double a, double b) const { return a < b ? a : b; }
};

// Indices of the front, ascending.
inline std::vector<uint32_t> pareto_front_2d_thrust(const std::vector<double>& o0,
                                                    const std::vector<double>& o1) {
  const size_t n = o0.size();
  if (n == 0) return {};
  thrust::device_vector<double> a(o0.begin(), o0.end()), b(o1.begin(), o1.end());
  thrust::device_vector<uint32_t> idx(n);
  thrust::sequence(idx.begin(), idx.end());
  // Lexicographic (o0, o1) with stable ties: sort by o1, then stably by o0.
  thrust::stable_sort_by_key(b.begin(), b.end(),
                             thrust::make_zip_iterator(thrust::make_tuple(a.begin(), idx.begin())));
  thrust::stable_sort_by_key(a.begin(), a.end(),
                             thrust::make_zip_iterator(thrust::make_tuple(b.begin(), idx.begin())));
  // Least o1 of each o0 group, then the least over all earlier groups.
  thrust::device_vector<double> keys(n), gmin(n);
  const auto ends = thrust::reduce_by_key(a.begin(), a.end(), b.begin(), keys.begin(), gmin.begin(),
                                          thrust::equal_to<double>(), ParetoMinOp());
  const size_t groups = static_cast<size_t>(ends.first - keys.begin());
  thrust::device_vector<double> before(groups);
  thrust::exclusive_scan(gmin.begin(), gmin.begin() + static_cast<std::ptrdiff_t>(groups),
                         before.begin(), std::numeric_limits<double>::infinity(), ParetoMinOp());
  // The per-point test is a sequential walk over sorted groups: small, done on the host.
  thrust::host_vector<double> ha = a, hb = b, hg = gmin, hbf = before;
  thrust::host_vector<uint32_t> hi = idx;
  std::vector<uint32_t> front;
  size_t g = 0;
  for (size_t i = 0; i < n; ++g) {
    size_t j = i;
    while (j < n && ha[j] == ha[i]) ++j;
    if (hg[g] < hbf[g])
      for (size_t k = i; k < j && hb[k] == hg[g]; ++k) front.push_back(hi[k]);
    i = j;
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace lumos::cuda
