#include "sweep/batch_fold_products.hpp"

#include <atomic>
#include <bit>
#include <cstring>

// As the batch replay's tile loop: the lane loops built once per instruction set, one picked at
// load time.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__NVCC__)
#define LUMOS_LANE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LUMOS_LANE_CLONES
#endif

namespace lumos::sweep::maxplus {
namespace {

// L lanes of doubles as one value (GCC's vector extension; written out for each L, since GCC
// drops the attribute from a type that depends on a template parameter).
typedef double Lanes8 __attribute__((vector_size(8 * sizeof(double))));
typedef double Lanes4 __attribute__((vector_size(4 * sizeof(double))));
template <size_t L>
struct LaneVec;
template <>
struct LaneVec<8> {
  using type = Lanes8;
};
template <>
struct LaneVec<4> {
  using type = Lanes4;
};
template <>
struct LaneVec<1> {
  using type = double;
};

// acc[(r * jn + jj) * B + q] (lanes q * L on) gains a[i + r][m] + b[m][j_jj] for each m of `ms`
// and r < R, with ai = a's row i at the block's first lane, b0 = b at that lane and b_col[jj] the
// offset of column j_jj in a row of b. Rows taken R at a time read each entry of b once for R
// rows.
template <size_t L, size_t B, size_t R>
[[gnu::always_inline]] inline void max_plus_sums(typename LaneVec<L>::type* acc, const double* ai,
                                                 const double* b0, const size_t* b_col,
                                                 const uint32_t* ms, size_t mn, size_t k, size_t V,
                                                 size_t jn) {
  using Vec = typename LaneVec<L>::type;
  for (size_t t = 0; t < mn; ++t) {
    const size_t m = ms[t];
    const double* const am = ai + m * V;
    const double* const bm = b0 + m * k * V;
#pragma GCC unroll 64
    for (size_t jj = 0; jj < jn; ++jj)
#pragma GCC unroll 8
      for (size_t q = 0; q < B; ++q) {
        Vec y;
        std::memcpy(&y, bm + b_col[jj] + q * L, sizeof y);
#pragma GCC unroll 8
        for (size_t r = 0; r < R; ++r) {
          Vec x;
          std::memcpy(&x, am + r * k * V + q * L, sizeof x);
          const Vec sum = x + y;
          Vec& c = acc[(r * jn + jj) * B + q];
          c = c > sum ? c : sum;
        }
      }
  }
}

// Lanes [v0, v0 + L * B) of c = a b, (a b)[i][j] = max over m of a[i][m] + b[m][j]: R rows by J
// columns of c (R * J * B vectors) stay in registers while m runs over the entries with a path in
// both one of the R rows of a and one of the J columns of b (the path bits; the others add
// nothing to any maximum), where adding into c in memory for every m read and wrote each entry k
// times. The columns are taken J at a time in the order `cols`. A load of a feeds J sums and one
// of b R sums: with 25 registers of sums (AVX-512 has 32) the loads are few enough that the sums,
// not the reads from the second-level cache, bound the product; 16 registers of sums (2 rows by 4
// columns of 2 vectors) read the cache more than it delivers. The last rows and columns are taken
// as a full block that overlaps the one before (k >= R, J): its entries there are computed again,
// to the same bits, and every block's width is known to the compiler, which keeps its sums in
// registers. Each entry of c is the maximum of the same sums in any order: the result is the same
// to the bit. The functions called here are always inlined: one built for the default
// instruction set would pass vectors otherwise than the clones expect.
template <size_t L, size_t B, size_t R, size_t J>
[[gnu::always_inline]] inline void max_plus_lanes(const LaneMatrix& a, const LaneMatrix& b,
                                                  LaneMatrix& c, const std::vector<uint32_t>& cols,
                                                  size_t v0) {
  using Vec = typename LaneVec<L>::type;
  const size_t k = a.k, V = a.lanes, W = a.words();
  const double* const pa = a.m.data() + v0;
  const double* const pb = b.m.data() + v0;
  double* const pc = c.m.data() + v0;
  double none_lanes[L];
  std::fill_n(none_lanes, L, kNoPath);
  Vec none;
  std::memcpy(&none, none_lanes, sizeof none);
  std::vector<uint64_t> block(W);
  std::vector<uint32_t> ms(k);
  size_t b_col[J];
  for (size_t j = 0; j < k; j += J) {
    const size_t j0 = std::min(j, k - J);
    std::fill(block.begin(), block.end(), 0);
    for (size_t jj = 0; jj < J; ++jj) {
      b_col[jj] = cols[j0 + jj] * V;
      for (size_t w = 0; w < W; ++w) block[w] |= b.col_bits[cols[j0 + jj] * W + w];
    }
    // Over the inner indices with a path in any of the rows: a row without one at m adds
    // kNoPath, which changes no maximum.
    for (size_t i1 = 0; i1 < k; i1 += R) {
      const size_t i = std::min(i1, k - R);
      size_t mn = 0;
      for (size_t w = 0; w < W; ++w) {
        uint64_t any = 0;
        for (size_t r = 0; r < R; ++r) any |= a.row_bits[(i + r) * W + w];
        for (uint64_t x = any & block[w]; x != 0; x &= x - 1)
          ms[mn++] = static_cast<uint32_t>(w * 64 + static_cast<size_t>(std::countr_zero(x)));
      }
      // Loops unrolled whole, so that the sums live in registers from start to store.
      Vec acc[R * J * B];
#pragma GCC unroll 64
      for (size_t x = 0; x < R * J * B; ++x) acc[x] = none;
      max_plus_sums<L, B, R>(acc, pa + i * k * V, pb, b_col, ms.data(), mn, k, V, J);
#pragma GCC unroll 16
      for (size_t r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (size_t jj = 0; jj < J; ++jj)
#pragma GCC unroll 8
          for (size_t q = 0; q < B; ++q)
            std::memcpy(pc + (i + r) * k * V + b_col[jj] + q * L, &acc[(r * J + jj) * B + q],
                        sizeof(Vec));
    }
  }
}

std::atomic<bool> narrow_products{false};  // use_narrow_products_for_testing

// Rows and columns of sums a product's loop holds in registers: 5 by 5 vectors where the
// instruction set has 32 vector registers (AVX-512), 3 by 4 where it has 16, one by one for a
// matrix smaller than that.
template <size_t L, size_t B>
[[gnu::always_inline]] inline void max_plus_block(const LaneMatrix& a, const LaneMatrix& b,
                                                  LaneMatrix& c, const std::vector<uint32_t>& cols,
                                                  size_t v0, bool wide) {
  if (wide && a.k >= 5)
    max_plus_lanes<L, B, 5, 5>(a, b, c, cols, v0);
  else if (a.k >= 4)
    max_plus_lanes<L, B, 3, 4>(a, b, c, cols, v0);
  else
    max_plus_lanes<L, B, 1, 1>(a, b, c, cols, v0);
}

// The columns of b, those with a path in most rows first (in their order where as many): a block
// of columns reads the rows with a path in any of its columns, and a period's matrices hold
// columns with a path in most rows beside columns with one in a few rows near the diagonal (a
// state entry read early in the period), whose blocks would read most rows for one column's
// sums. Columns alike side by side: the large sweep's 78- and 110-entry matrices take 11% and
// 27% fewer sums (docs/design.md, "Sweeps").
std::vector<uint32_t> column_order(const LaneMatrix& b) {
  const size_t k = b.k, W = b.words();
  std::vector<uint32_t> paths(k, 0), cols(k);
  for (size_t j = 0; j < k; ++j) {
    for (size_t w = 0; w < W; ++w)
      paths[j] += static_cast<uint32_t>(std::popcount(b.col_bits[j * W + w]));
    cols[j] = static_cast<uint32_t>(j);
  }
  std::stable_sort(cols.begin(), cols.end(),
                   [&](uint32_t x, uint32_t y) { return paths[x] > paths[y]; });
  return cols;
}

// c's path bits from its factors': (i, j) may have a path where a[i][m] and b[m][j] have one for
// some m. Lanes are configurations of one graph, whose paths are the same in every lane, so these
// are the bits of c itself; were they more, a product would only read more entries.
void product_paths(const LaneMatrix& a, const LaneMatrix& b, LaneMatrix& c) {
  const size_t k = a.k, W = a.words();
  std::fill(c.col_bits.begin(), c.col_bits.end(), 0);
  for (size_t i = 0; i < k; ++i) {
    uint64_t* const row = &c.row_bits[i * W];
    std::fill_n(row, W, 0);
    for (size_t w = 0; w < W; ++w)
      for (uint64_t x = a.row_bits[i * W + w]; x != 0; x &= x - 1) {
        const size_t m = w * 64 + static_cast<size_t>(std::countr_zero(x));
        for (size_t u = 0; u < W; ++u) row[u] |= b.row_bits[m * W + u];
      }
    for (size_t u = 0; u < W; ++u)
      for (uint64_t x = row[u]; x != 0; x &= x - 1) {
        const size_t j = u * 64 + static_cast<size_t>(std::countr_zero(x));
        c.col_bits[j * W + i / 64] |= uint64_t{1} << (i % 64);
      }
  }
}

// c = a b in every lane, lanes taken 8, 4 and then 1 at a time (a vector of 16 lanes as one value
// is slower than two of 8, and two of 8 as one block of sums leave fewer registers for rows and
// columns), with its path bits.
}  // namespace

LUMOS_LANE_CLONES void max_plus_into(const LaneMatrix& a, const LaneMatrix& b, LaneMatrix& c) {
  const size_t V = a.lanes;
  product_paths(a, b, c);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // Constant in each clone but the default one, which is taken where AVX-512 is not.
  const bool wide =
      __builtin_cpu_supports("avx512f") && !narrow_products.load(std::memory_order_relaxed);
#else
  const bool wide = false;
#endif
  const std::vector<uint32_t> cols = column_order(b);
  size_t v0 = 0;
  for (; v0 + 8 <= V; v0 += 8) max_plus_block<8, 1>(a, b, c, cols, v0, wide);
  if (v0 + 4 <= V) max_plus_block<4, 1>(a, b, c, cols, v0, wide), v0 += 4;
  for (; v0 < V; ++v0) max_plus_block<1, 1>(a, b, c, cols, v0, wide);
}

LaneMatrix max_plus(const LaneMatrix& a, const LaneMatrix& b) {
  LaneMatrix c(a.k, a.lanes, LaneMatrix::Unwritten{});
  max_plus_into(a, b, c);
  return c;
}

LaneMatrix max_plus_power(LaneMatrix a, int64_t n) {
  LaneMatrix r(a.k, a.lanes);
  bool identity = true;
  for (; n > 0; n >>= 1) {
    if (n & 1) {
      r = identity ? a : max_plus(r, a);
      identity = false;
    }
    if (n > 1) a = max_plus(a, a);
  }
  if (identity) {
    for (size_t i = 0; i < a.k; ++i) std::fill_n(r.at(i, i), a.lanes, 0.0);
    r.find_paths();
  }
  return r;
}

const LaneMatrix& power_from_squares(PeriodPowers* pp, int64_t n, LaneMatrix* scratch) {
  std::vector<LaneMatrix>& squares = pp->squares;
  if (n <= 0) {
    *scratch = LaneMatrix(squares.front().k, squares.front().lanes);
    for (size_t i = 0; i < scratch->k; ++i) std::fill_n(scratch->at(i, i), scratch->lanes, 0.0);
    scratch->find_paths();
    return *scratch;
  }
  const auto bits = static_cast<uint64_t>(n);
  const int top = std::bit_width(bits) - 1;
  while (squares.size() <= static_cast<size_t>(top))
    squares.push_back(max_plus(squares.back(), squares.back()));
  auto low = [&](int b) { return static_cast<int64_t>(bits & ((uint64_t{2} << b) - 1)); };
  // The longest prefix of n met before; else n's lowest set bit's squaring. The products are
  // made in place (a kept prefix, or `scratch`), none copied.
  int next = std::countr_zero(bits);
  const LaneMatrix* r = &squares[static_cast<size_t>(next)];
  for (int b = top; b > next; --b)
    if (bits >> b & 1) {
      const auto it = pp->prefixes.find(low(b));
      if (it == pp->prefixes.end()) continue;
      r = &it->second;
      next = b;
      break;
    }
  for (int b = next + 1; b <= top; ++b)
    if (bits >> b & 1) {
      LaneMatrix c(r->k, r->lanes, LaneMatrix::Unwritten{});
      max_plus_into(*r, squares[static_cast<size_t>(b)], c);
      if (pp->prefixes.size() < PeriodPowers::kPrefixesKept) {
        r = &pp->prefixes.emplace(low(b), std::move(c)).first->second;
      } else {
        *scratch = std::move(c);
        r = scratch;
      }
    }
  return *r;
}

void use_narrow_products_for_testing(bool narrow) {
  narrow_products.store(narrow, std::memory_order_relaxed);
}

}  // namespace lumos::sweep::maxplus
