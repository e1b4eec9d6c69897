// A part of 07_reduce_multicast/reduce_multicast.cu, whose main() runs the parts in order.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/cluster.cuh"
#include "07_reduce_multicast/parts/problem.cuh"

// ===========================================================================
// Part B: clusters
// ===========================================================================
// ---- Part 4: broadcast ------------------------------------------------------
// Every CTA needs ALL of a matrix B of `tiles` tiles of 64 x 64 u32, as
// every CTA of one column of a GEMM's C reads all of that column's panel of
// B (the operand shared along one axis; along the other it is A's row
// panel). B stays in L2 and every CTA reads it from there. What a CTA does with
// a tile is small (a checksum per row), so the time is the time to deliver B.
// Warp 0's elected lane is the producer: BC_STAGES stages of one tile each.
// Warps 1-4 consume: each row's sum of (2c + 1) * B[row][c] (mod 2^32),
// written out per (CTA, tile, row), so the check can tell which row of B a
// CTA really got.
// With .multicast::cluster, a tile is split into S slices of 64 / S rows
// (S = the cluster size); CTA rank r loads slice r once, for all S CTAs:
// - every CTA arms its OWN full barrier for the WHOLE tile (expect_tx 16 KiB),
//   since every slice lands in every CTA and completes on its barrier;
// - a stage may be refilled only when ALL S CTAs have consumed it: each
//   consumer warp arrives on the empty barrier of every CTA of the cluster
//   (count 4 x S), and a producer waits for its own;
// - the inits are published to the cluster (fence.mbarrier_init +
//   barrier.cluster) before any CTA issues, and a last barrier.cluster keeps
//   every CTA alive until no peer can still write into it or arrive on it.
// Without multicast (S = 1 for the protocol) each CTA loads every tile itself.
// Order: with stagger 0 every CTA reads tile 0, 1, 2, ... at about the same
// time; with stagger d, the CTAs of cluster q (of CTA c without multicast)
// start at tile q * d and wrap around, so different clusters read different
// tiles at any moment, as CTAs that drift apart would.
#define BT_ROWS 64
#define BT_COLS 64
#define BT_BYTES (BT_ROWS * BT_COLS * 4)
#define BC_STAGES 8
#define BC_CONSUMER_WARPS 4
#define BC_THREADS (32 + 32 * BC_CONSUMER_WARPS)
#define MAX_CLUSTER 16

template <bool MULTICAST>
__global__ void __launch_bounds__(BC_THREADS, 1)
    broadcast(const __grid_constant__ CUtensorMap map, uint32_t* sums, uint32_t tiles, uint32_t stagger) {
    __shared__ uint64_t full[BC_STAGES], empty[BC_STAGES];
    uint32_t* stages = (uint32_t*)tma_smem_base<128>();  // [BC_STAGES][64][64] u32
    const uint32_t S = MULTICAST ? cluster_nctarank() : 1, rank = MULTICAST ? cluster_ctarank() : 0;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint32_t first = blockIdx.x / S * stagger % tiles;  // the tile this CTA (and its cluster) starts at
    if (threadIdx.x == 0) {
        for (int s = 0; s < BC_STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], BC_CONSUMER_WARPS * S);
        }
        mbar_fence_init();  // release the inits to the cluster ...
    }
    cluster_sync();  // ... which acquires them before any CTA issues into, or arrives on, a peer
    if (warp == 0) {
        if (elect_one_sync()) {
            const uint32_t slice_rows = BT_ROWS / S, slice = rank;
            for (uint32_t t = 0; t < tiles; ++t) {
                const uint32_t s = t % BC_STAGES;
                if (t >= BC_STAGES && !MBAR_WAIT_CLUSTER(&empty[s], (t / BC_STAGES - 1) & 1)) break;
                mbar_arrive_expect_tx(&full[s], BT_BYTES);  // all S slices
                const uint32_t row0 = (first + t) % tiles * BT_ROWS;
                uint32_t* dst = stages + s * BT_ROWS * BT_COLS + rank * slice_rows * BT_COLS;
                // LAB-BEGIN: load this CTA's part of tile t: with MULTICAST, slice `slice` (slice_rows rows) into dst for every CTA of the cluster (the ctaMask); without, the whole tile into dst
                if (MULTICAST)
                    tma_load_2d_multicast(dst, &map, 0, (int32_t)(row0 + slice * slice_rows), &full[s],
                                          (uint16_t)((1u << S) - 1));
                else
                    tma_load_2d(dst, &map, 0, (int32_t)row0, &full[s]);
                // LAB-STUB: (void)dst, (void)row0, (void)slice;
                // LAB-END
            }
        }
        __syncwarp();
    } else {
        // Consumer thread c (0..127) sums half a row: row c / 2, columns
        // 32 h .. 32 h + 31 (h = c % 2), as 8 chunks of 16 bytes taken in a
        // rotated order, so that the 8 threads of a quarter warp (4 rows, 2
        // halves) always read 8 different bank groups: no conflicts.
        const uint32_t c = threadIdx.x - 32, row = c / 2, h = c % 2;
        for (uint32_t t = 0; t < tiles; ++t) {
            const uint32_t s = t % BC_STAGES;
            if (!MBAR_WAIT(&full[s], (t / BC_STAGES) & 1)) break;
            const uint32_t* tile = stages + s * BT_ROWS * BT_COLS;
            uint32_t sum = 0;
#pragma unroll
            for (uint32_t j = 0; j < 8; ++j) {
                const uint32_t col = (h * 8 + (j + row + 4 * h) % 8) * 4;
                const uint4 v = *(const uint4*)&tile[row * BT_COLS + col];
                sum += v.x * (2 * col + 1) + v.y * (2 * col + 3) + v.z * (2 * col + 5) + v.w * (2 * col + 7);
            }
            sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);  // the other half of the row
            if (h == 0) sums[((size_t)blockIdx.x * tiles + (first + t) % tiles) * BT_ROWS + row] = sum;
            __syncwarp();  // the whole warp has read the stage
            if (MULTICAST) {
                if (lane < S) mbar_arrive_remote(&empty[s], lane);  // one arrival on each CTA's barrier
            } else if (lane == 0) {
                mbar_arrive(&empty[s]);
            }
        }
        __syncwarp();  // a bounded wait that gave up may leave the lanes apart; .aligned needs them together
    }
    // No CTA leaves while a peer may still write into it or arrive on it.
    // barrier.cluster does not wait for asynchronous copies; what makes this
    // safe is that every consumer waited for its last full stage (every
    // multicast into this CTA has landed) before arriving here.
    cluster_sync();
}

// ---- Part 4 (host): the variants, the check, the cluster sizes -------------
typedef struct {
    const char* name;
    uint32_t cluster;  // CTAs per cluster; 1 = a plain launch
    bool multicast, staggered;
} BroadcastVariant;

static const BroadcastVariant kBroadcast[] = {
    {"broadcast_c1", 1, false, false},           {"broadcast_c2", 2, false, false},
    {"broadcast_c2_mc", 2, true, false},         {"broadcast_c4", 4, false, false},
    {"broadcast_c4_mc", 4, true, false},         {"broadcast_c8_mc", 8, true, false},
    {"broadcast_c16_mc", 16, true, false},       {"broadcast_c1_staggered", 1, false, true},
    {"broadcast_c4_mc_staggered", 4, true, true}};
#define NUM_BROADCAST (int)(sizeof kBroadcast / sizeof kBroadcast[0])

typedef struct {
    uint32_t *b, *sums;  // B: tiles x 64 rows x 64 u32; sums: ctas x tiles x 64
    uint32_t tiles, ctas, seed;
    size_t smem, nsums;
    uint32_t* row_sum;                 // host: each row's checksum, as the consumers compute it
    uint32_t* want;                    // host: row_sum for every CTA
    CUtensorMap map[MAX_CLUSTER + 1];  // map[S]: boxes of 64 / S rows (slices), S = 1, 2, 4, 8, 16
    cudaStream_t s;
} Broadcast;

// B's words are even (a seeded word, shifted up one bit): every checksum
// sum((2c + 1) * B[row][c]) is then even, and never the poison word, which is
// odd, so a sum the consumers never wrote cannot pass for one they did.
static_assert(POISON_WORD % 2 == 1, "an even checksum must never be the poison word");
static uint32_t b_word(uint32_t seed, size_t i) {
    return seeded_word(seed ^ 0xB0Bu, i) << 1;
}

// B itself, each row's checksum as the consumers compute it, and what a
// correct run writes: for every CTA, every row's checksum (b->tiles set).
static void broadcast_reference(Broadcast* b, uint32_t* host_b) {
    for (size_t r = 0; r < (size_t)b->tiles * BT_ROWS; ++r) {
        uint32_t sum = 0;
        for (uint32_t c = 0; c < BT_COLS; ++c) {
            host_b[r * BT_COLS + c] = b_word(b->seed, r * BT_COLS + c);
            sum += host_b[r * BT_COLS + c] * (2 * c + 1);
        }
        b->row_sum[r] = sum;
    }
    for (size_t i = 0; i < b->nsums; ++i) b->want[i] = b->row_sum[i % ((size_t)b->tiles * BT_ROWS)];
}

// A launch of the broadcast kernel in clusters of `cluster` CTAs (1: no
// cluster attribute, a plain launch). `attr` must outlive the config.
static cudaLaunchConfig_t broadcast_config(const Broadcast* b, uint32_t cluster, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg = {};
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = cluster;  // the grid must be a multiple of it
    attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
    cfg.gridDim = dim3(b->ctas);
    cfg.blockDim = dim3(BC_THREADS);
    cfg.dynamicSmemBytes = b->smem;
    cfg.stream = b->s;
    cfg.attrs = attr;
    cfg.numAttrs = cluster > 1;
    return cfg;
}

static void launch_broadcast(const Broadcast* b, const BroadcastVariant* v) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = broadcast_config(b, v->cluster, &attr);
    const CUtensorMap* map = &b->map[v->multicast ? v->cluster : 1];
    // staggered: the groups that read together (clusters with multicast,
    // else single CTAs) start evenly spread over the tiles
    const uint32_t groups = b->ctas / (v->multicast ? v->cluster : 1);
    const uint32_t stagger = v->staggered ? (b->tiles + groups - 1) / groups : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, v->multicast ? broadcast<true> : broadcast<false>, *map, b->sums,
                                  b->tiles, stagger));
}

// Every (CTA, tile, row) checksum. A wrong one is looked up among all rows
// of B: a row that holds ANOTHER row's data is a slice loaded into the wrong
// place (or twice).
static size_t check_broadcast(const char* name, const Broadcast* b) {
    const uint32_t* got = read_back(b->sums, b->nsums, b->s);
    const size_t wrong = check_words(name, got, b->want, b->nsums);
    if (!wrong) return 0;
    size_t moved = 0, unwritten = 0, other = 0;
    const uint32_t rows = b->tiles * BT_ROWS;
    for (size_t i = 0; i < b->nsums; ++i) {
        if (got[i] == b->want[i]) continue;
        uint32_t r = 0;
        while (r < rows && b->row_sum[r] != got[i]) ++r;
        if (got[i] == POISON_WORD)
            ++unwritten;
        else if (r < rows) {
            if (moved++ == 0)
                printf("       CTA %zu, tile %zu, row %zu holds the data of tile %u, row %u\n",
                       i / BT_ROWS / b->tiles, i / BT_ROWS % b->tiles, i % BT_ROWS, r / BT_ROWS, r % BT_ROWS);
        } else
            ++other;
    }
    printf(
        "       of the %zu wrong: %zu hold another row of B (a slice in the wrong place), %zu were never "
        "written, %zu match no row\n",
        wrong, moved, unwritten, other);
    return wrong;
}

// One variant: the sums poisoned (a variant that writes nothing cannot pass
// on the one before it), one checked launch, then the timed ones. Bytes per
// run: what the CTAs receive, ctas x B.
static void broadcast_part(const Broadcast* b, const BroadcastVariant* v, const Cli* cli) {
    poison_device(b->sums, b->nsums * 4, b->s);
    CHECK_THEN_TIME(v->name, cli, b->s, (double)b->tiles * BT_BYTES * b->ctas, check_broadcast(v->name, b),
                    launch_broadcast(b, v));
}

// The cluster sizes this GPU can run with this kernel's shape, one GPU line:
// the largest it supports, and how many clusters of each size fit at once.
static void report_clusters(const Broadcast* b) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t cfg = broadcast_config(b, 1, &attr);
    int most = 0;
    CUDA_CHECK(cudaOccupancyMaxPotentialClusterSize(&most, (const void*)broadcast<true>, &cfg));
    char fit[160] = "";
    for (uint32_t S = 1; S <= MAX_CLUSTER; S *= 2) {
        int clusters = 0;
        cfg = broadcast_config(b, S, &attr);
        cfg.numAttrs = 1;
        CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, (const void*)broadcast<true>, &cfg));
        snprintf(fit + strlen(fit), sizeof fit - strlen(fit), "%s%d x %u", S > 1 ? ", " : "", clusters, S);
        if (clusters * S < b->ctas && S <= (uint32_t)most)
            record_gpu_line("broadcast: only %u of the %u CTAs run at once in clusters of %u", clusters * S,
                            b->ctas, S);
    }
    record_gpu_line(
        "broadcast: %u CTAs of %d threads, 1 per SM, %d stages of 16 KiB; largest cluster %d; at once: "
        "%s CTAs",
        b->ctas, BC_THREADS, BC_STAGES, most, fit);
}

// Part 4: B's rows, their checksums, one map per slice height, then every
// variant checked and timed.
static void part_broadcast(uint32_t tiles, uint32_t ctas, uint32_t seed, const Cli* cli, cudaStream_t s) {
    Broadcast b;
    memset(&b, 0, sizeof b);
    b.tiles = tiles, b.ctas = ctas, b.seed = seed, b.s = s;
    const size_t words = (size_t)tiles * BT_ROWS * BT_COLS;
    b.nsums = (size_t)ctas * tiles * BT_ROWS;
    CUDA_CHECK(cudaMalloc(&b.b, words * 4));
    CUDA_CHECK(cudaMalloc(&b.sums, b.nsums * 4));
    uint32_t* host_b = (uint32_t*)xmalloc(words * 4, "the broadcast matrix");
    b.row_sum = (uint32_t*)xmalloc((size_t)tiles * BT_ROWS * 4, "the row checksums");
    b.want = (uint32_t*)xmalloc(b.nsums * 4, "the broadcast reference");
    broadcast_reference(&b, host_b);
    CUDA_CHECK(cudaMemcpyAsync(b.b, host_b, words * 4, cudaMemcpyHostToDevice, s));
    for (uint32_t S = 1; S <= MAX_CLUSTER; S *= 2) {
        const TensorMapSpec spec =
            tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, b.b, (uint64_t)tiles * BT_ROWS, BT_COLS,
                           BT_COLS * 4, BT_ROWS / S, BT_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
        b.map[S] = make_tensor_map(&spec, "the broadcast matrix");
    }
    b.smem = smem_for_one_block_per_sm((const void*)broadcast<true>, BC_THREADS,
                                       tma_smem_bytes(BC_STAGES * BT_BYTES));
    smem_for_one_block_per_sm((const void*)broadcast<false>, BC_THREADS, b.smem);
    // Clusters of more than 8 are "non-portable": a kernel must opt in.
    CUDA_CHECK(cudaFuncSetAttribute((const void*)broadcast<true>,
                                    cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    report_clusters(&b);
    for (int v = 0; v < NUM_BROADCAST; ++v) broadcast_part(&b, &kBroadcast[v], cli);
    free(host_b);
    free(b.row_sum);
    free(b.want);
    CUDA_CHECK(cudaFree(b.b));
    CUDA_CHECK(cudaFree(b.sums));
}
