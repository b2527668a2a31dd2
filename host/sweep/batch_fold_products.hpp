// Max-plus matrices over a sweep batch's lanes and their products (docs/design.md, "Sweeps"):
// every lane is one configuration's matrix, and each lane computes what one configuration's fold
// (model::fold_slot_durations) computes, to the bit. What batch_fold.cpp raises to powers.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace lumos::sweep::maxplus {

// No path from an entry to another: the max-plus zero.
constexpr double kNoPath = -std::numeric_limits<double>::infinity();

// An allocator whose elements start unwritten (a product's result is written whole, a replay's
// finish lanes before they are read): a vector's own zeroing was a pass over every new product.
template <typename T>
struct UnwrittenAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UnwrittenAllocator<U>;
  };
  UnwrittenAllocator() = default;
  template <typename U>
  UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// k x k max-plus matrices of every lane: m[(i * k + j) * lanes + v].
// With it, which entries have a path in some lane, as bits: row_bits[i * words + w] holds the j
// where entry (i, j) has one, col_bits[j * words + w] the i. A sum with an entry without a path
// is kNoPath in every lane and changes no maximum, so a product reads only the inner indices m
// with a path in both factors. A product's result gets its bits from its factors'
// (product_paths); a matrix filled otherwise finds them once (find_paths), not once per product
// it is a factor of.
struct LaneMatrix {
  size_t k = 0, lanes = 0;
  std::vector<double, UnwrittenAllocator<double>> m;
  std::vector<uint64_t> row_bits, col_bits;
  LaneMatrix(size_t k_, size_t lanes_)
      : k(k_),
        lanes(lanes_),
        m(k_ * k_ * lanes_, kNoPath),
        row_bits(k_ * words(), 0),
        col_bits(k_ * words(), 0) {}
  // A matrix to be written whole (a product's result), its bits with it.
  struct Unwritten {};
  LaneMatrix(size_t k_, size_t lanes_, Unwritten)
      : k(k_), lanes(lanes_), m(k_ * k_ * lanes_), row_bits(k_ * words()), col_bits(k_ * words()) {}
  size_t words() const { return (k + 63) / 64; }
  double* at(size_t i, size_t j) { return m.data() + (i * k + j) * lanes; }
  const double* at(size_t i, size_t j) const { return m.data() + (i * k + j) * lanes; }
  void mark_path(size_t i, size_t j) {
    row_bits[i * words() + j / 64] |= uint64_t{1} << (j % 64);
    col_bits[j * words() + i / 64] |= uint64_t{1} << (i % 64);
  }
  // The bits of a matrix written entry by entry.
  void find_paths() {
    std::fill(row_bits.begin(), row_bits.end(), 0);
    std::fill(col_bits.begin(), col_bits.end(), 0);
    for (size_t i = 0; i < k; ++i)
      for (size_t j = 0; j < k; ++j)
        if (std::any_of(at(i, j), at(i, j) + lanes, [](double x) { return x != kNoPath; }))
          mark_path(i, j);
  }
};

// c = a b in every lane, (a b)[i][j] = max over m of a[i][m] + b[m][j], with c's path bits; c is
// neither a nor b.
void max_plus_into(const LaneMatrix& a, const LaneMatrix& b, LaneMatrix& c);
LaneMatrix max_plus(const LaneMatrix& a, const LaneMatrix& b);

// a to the n-th max-plus power by repeated squaring, as one configuration's fold does; the
// identity times a is a itself, and is not computed.
LaneMatrix max_plus_power(LaneMatrix a, int64_t n);

// A period's squarings (a^(2^b) is squares[b], squares[0] = a) and the products of them a power
// took on its way: a^n is the product of the squarings of n's set bits, lowest first, so powers
// whose low bits agree (the micro-batch counts of a sweep's batch sizes often do) share the first
// products.
struct PeriodPowers {
  std::vector<LaneMatrix> squares;
  std::map<int64_t, LaneMatrix> prefixes;  // a^p for each p met: n's lowest bits up to a set one
  static constexpr size_t kPrefixesKept = 16;
};

// a to the n-th power from its squarings, adding those missing: the same products, in the same
// order, as max_plus_power, those of a prefix met before taken as they were computed then. The
// result is a kept prefix or *scratch.
const LaneMatrix& power_from_squares(PeriodPowers* pp, int64_t n, LaneMatrix* scratch);

// Tests: when `narrow`, the products take the blocks built for 16 vector registers (where AVX-512
// is not) on any machine; the results are the same to the bit either way.
void use_narrow_products_for_testing(bool narrow);

}  // namespace lumos::sweep::maxplus
