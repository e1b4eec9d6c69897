// 10_grouped_gemm/parts/batch.cuh: the data and the batches. Seeded small
// integers, made on the GPU; a batch: how many rows each expert gets, where
// they are, and the order the kernel walks its tiles in (the host's plan).
#pragma once
#include "common/tutorial.cuh"
#include "10_grouped_gemm/parts/config.cuh"

// ---- The data: seeded small integers, exact in any summation order ---------
// Element i of an operand is a nonzero integer in -4..4, a hash of the seed
// and i (common/tutorial.cuh's seeded_word, computed here on both sides: the
// operands are made on the GPU, and the CPU recomputes the elements it needs).
// Every product is at most 16 in magnitude and every sum of K of them at most
// 16 K <= 2^24: exact in fp32 in any order, so the tensor cores, cuBLAS and
// the plain reference must agree bit for bit. Expert g's B_g is rows g N ..
// g N + N - 1 of one operand, A_g rows first_row[g] .. of another; each
// batch's A has its own seed (a_seed), B is the same in every batch. A row's
// padding past K (the 16-byte rule) holds a bf16 NaN, which no element is: a
// load that reads it poisons its sums.
static __host__ __device__ __forceinline__ int input_value(uint32_t seed, uint64_t i) {
    const uint32_t w = seeded_word(seed, i), v = (w & 3) + 1;
    return (w & 4) ? -(int)v : (int)v;
}

// rows x ld elements: element (r, k) = input_value(seed, r K + k) as bf16
// (an integer up to 4 is exact: the top half of its fp32), NaN past K.
__global__ void make_operand(uint16_t* p, uint64_t rows, uint32_t k, uint32_t ld, uint32_t seed) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < rows * ld;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t r = i / ld, kk = i % ld;
        p[i] = kk < k ? (uint16_t)(__float_as_uint((float)input_value(seed, r * k + kk)) >> 16)
                      : (uint16_t)PAD_BF16;
    }
}

static uint32_t round_up(uint32_t x, uint32_t to) {
    return (x + to - 1) / to * to;
}

// ---- A batch: how many rows each expert gets, and where they are -------------
// What every kernel here reads at RUN time, from device memory: a graph
// replayed with a new batch written here computes the new batch.
typedef struct {
    const uint16_t* a;                    // sum(M_g) x ld_ab bf16: every expert's rows, in expert order
    float* c;                             // the same rows of C, ldc floats apart
    uint32_t first_row[MAX_EXPERTS + 1];  // expert g's rows: first_row[g] .. first_row[g + 1]
    uint32_t
        first_tile[MAX_EXPERTS + 1];  // the tiles (128 x 256) of the i-th expert visited: first_tile[i] ..
    uint8_t order[MAX_EXPERTS];       // the experts in the order visited (the schedule, below)
    uint32_t split;                   // units before it: of experts of two tile rows or more
} Batch;
static_assert(MAX_EXPERTS <= 256, "an expert's number fits a byte of Batch.order");

// M_g of G experts over `total` rows: a Zipf law (expert of rank i gets a
// share 1 / (i + 1)^s), then the two smallest made 1 and 0 rows (an expert
// that gets one token, one that gets none), the ranks shuffled by the seed.
static void expert_rows(uint32_t* rows, uint32_t experts, uint32_t total, double s, uint32_t seed) {
    double w = 0;
    for (uint32_t i = 0; i < experts; ++i) w += pow(i + 1.0, -s);
    uint32_t given = 0, by_rank[MAX_EXPERTS] = {0};
    for (uint32_t i = 0; i < experts; ++i) given += by_rank[i] = (uint32_t)(total * pow(i + 1.0, -s) / w);
    by_rank[0] += total - given;
    if (experts >= 3) {
        by_rank[0] += by_rank[experts - 1] + by_rank[experts - 2] - 1;
        by_rank[experts - 1] = 0, by_rank[experts - 2] = 1;
    }
    uint32_t order[MAX_EXPERTS];
    for (uint32_t i = 0; i < experts; ++i) order[i] = i;
    for (uint32_t i = experts - 1; i > 0; --i) {  // Fisher-Yates, seeded
        const uint32_t j = seeded_word(seed, i) % (i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (uint32_t i = 0; i < experts; ++i) rows[order[i]] = by_rank[i];
}

static uint32_t tiles_of(uint32_t rows, uint32_t n) {
    return (rows + BM - 1) / BM * ((n + BN - 1) / BN);
}

// A batch's row offsets and its schedule. The plan: mix the work when the
// memory-bound units (experts of one tile row) are fewer than the rest, so
// that each can be dealt between compute-bound ones; when they are the
// majority, there is too little compute to hide them under, and dealing the few
// large experts' tiles among them costs those their reuse of B_g in L2 (the
// lesson's counters: a GB more read from DRAM), so the experts keep their own
// order. Mixed: the experts of two tile rows or more first, then the others,
// each kind in expert order, `split` between them; unmixed: every expert in
// its own order (split = every unit). `other` gives the schedule the plan did
// not pick (the ablation). Here the host plans from the sizes; a router on the
// GPU would do the same in one block (a count, a partition and a prefix sum
// over at most 256 experts).
static void fill_batch(Batch* b, const uint32_t* rows, uint32_t experts, uint32_t n, bool other) {
    b->first_row[0] = b->first_tile[0] = 0;
    uint32_t at = 0, small = 0, units = 0;
    for (uint32_t g = 0; g < experts; ++g) {
        b->first_row[g + 1] = b->first_row[g] + rows[g];
        small += rows[g] <= BM ? tiles_of(rows[g], n) : 0, units += tiles_of(rows[g], n);
    }
    const bool mix = (2 * small < units) != other;
    for (int second = 0; second < 2; ++second) {  // mixed: the compute-bound experts, then the others
        if (second) b->split = b->first_tile[at];
        for (uint32_t g = 0; g < experts; ++g)
            if (!mix ? second == 0 : second == (rows[g] <= BM)) {
                b->order[at] = (uint8_t)g;
                b->first_tile[at + 1] = b->first_tile[at] + tiles_of(rows[g], n);
                ++at;
            }
    }
    if (!mix) b->split = b->first_tile[experts];
}
