// The device Pareto front's Thrust code (cuda/pareto_thrust.hpp) run by Thrust's CPP host system
// (this file is compiled with THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP), held to the host
// front on random data with ties: the device code is tested without a GPU. On a GPU,
// CudaPareto.MatchesTheHostFront runs the same code with the CUDA system.
#include <gtest/gtest.h>

#include <random>

#include "pareto_thrust.hpp"
#include "replay/pareto.hpp"

static_assert(THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CPP,
              "this test runs the device code on the host");

TEST(ParetoThrustOnTheHost, MatchesTheHostFront) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 3000;
    std::vector<double> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = rng() % 50, b[i] = rng() % 50;
    EXPECT_EQ(lumos::cuda::pareto_front_2d_thrust(a, b), lumos::replay::pareto_front({a, b}))
        << trial;
  }
  EXPECT_TRUE(lumos::cuda::pareto_front_2d_thrust({}, {}).empty());
}
