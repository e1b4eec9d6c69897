// 10_grouped_gemm: a mixture-of-experts GEMM, where tensor maps edited on the
// device pay: G experts, C_g = A_g B_g^T, bf16 in, fp32 out, the experts'
// rows of A back to back (the "contiguous" layout an MoE layer hands over).
// Parts, each checked bit for bit per expert, timed against dense cuBLAS here:
// 1 one launch per expert (cuBLAS, ours, cuBLAS from a CUDA graph), 2
// cublasGemmGroupedBatchedEx, 3 one persistent kernel over every expert's
// tiles: one map for all (masked stores), maps built on the host, maps built
// by a device kernel, maps edited in shared memory when a tile crosses an
// expert; 4 under CUDA graphs: captured on one batch, replayed on another.
// New since step 09: nothing new in PTX; 08's edits and fences inside 09's
// kernel. The Makefile and tools/sanitize.sh read these lines (below):
// link: -lcublas
// sanitize: --kernel-name kns=grouped_gemm --kernel-name kns=build_maps
// sanitize: --kernel-name kns=retarget_alone --kernel-name kns=make_operand
// sanitize-tools: memcheck synccheck
// Run: make run-10 [ARGS="--experts 64 --rows 16384"], make check-10.
#include "common/cublas_check.h"
#include "01_memcpy_baseline/occupancy.cuh"
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/pipeline.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/named_barrier.cuh"
#include "08_descriptor_update/tensormap_edit.cuh"
#include "09_gemm/reference.cuh"
#include "09_gemm/wgmma.cuh"

// 09's tile: 128 x 256 outputs per CTA (two consumer warpgroups of 64 rows,
// cooperative), K in stages of 64 bf16 (one 128-byte swizzle row), 4 stages,
// a producer warpgroup; C leaves through shared memory and the TMA store in
// boxes of 64 rows x 32 fp32.
// No cluster: 09's ablation measured the multicast within noise of the same
// kernel without it.
#define BM 128
#define BN 256
#define BK 64
#define WG_M 64
#define K_STEP 16
#define STAGES 4
#define ROW_BYTES (BK * 2)
#define A_BYTES (BM * ROW_BYTES)
#define STAGE_BYTES ((BM + BN) * ROW_BYTES)
#define EPI_COLS 32
#define EPI_BOX_BYTES (WG_M * EPI_COLS * 4)
#define THREADS 384
#define SMEM_BYTES (STAGES * STAGE_BYTES + 2 * 2 * EPI_BOX_BYTES + 1024)  // + 1024: the stages' alignment
static_assert(SMEM_BYTES + 2048 <= 227 * 1024,
              "the stages, the boxes and the static shared memory fit in 227 KiB");
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define FRAME 32  // guard rows and columns around C
#define MAX_EXPERTS 256
#define MAX_K (1u << 20)  // exact fp32 sums: |sum| <= 16 K <= 2^24
#define PAD_BF16 0x7FC0u  // a row's padding: a bf16 NaN, which no element is

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

// ---- The schedule: which tile is unit u -----------------------------------------
// The experts are visited in Batch.order, their tiles numbered one expert after
// the other (first_tile), within an expert in bands of `band` tile rows walked
// column by column (09's raster). The order puts the experts of two tile rows
// or more first (units 0 .. split - 1) and those of one tile row after: an
// expert of 128 rows or fewer fetches a 2 MB slice of B_g per tile for those
// few rows, so its tiles wait on memory, while a larger expert's tiles reuse
// each slice and wait on the MMAs. Walked in that order the two kinds would
// take the GPU in turns; `mixed` deals the memory-bound units out evenly among
// the others instead, so that every wave holds some of each. split = units
// (the experts in their own order, unmixed) leaves the numbering as it is.
// Which of the two a batch gets is the host's plan (fill_batch).
static __host__ __device__ __forceinline__ uint32_t mixed(uint32_t u, uint32_t units, uint32_t split) {
    const uint32_t small = units - split;  // memory-bound units, numbered from `split`
    const uint32_t before = (uint32_t)((uint64_t)u * small / units);  // of them, among units 0 .. u - 1
    const uint32_t through = (uint32_t)((uint64_t)(u + 1) * small / units);  // among units 0 .. u
    return through > before ? split + before : u - before;
}

// ---- The grouped kernel ----------------------------------------------------------
// One persistent kernel for every expert's tiles (unit u: the schedule above).
// What changes from
// one expert to the next is where its operands are: the tensor maps. Four
// ways to get a map for expert g (SOURCE):
//   ONE_MAP      no per-expert map: one map over all of A (every expert's rows)
//                and one over all of B (G N rows); a tile past its expert's
//                last row reads the next expert's rows, and the epilogue
//                stores from registers, masked at M_g (no TMA store: it could
//                not clip at an expert's edge).
//   HOST_MAPS    3 maps per expert (A_g: M_g rows, B_g, C_g: M_g rows), built on
//                the host (cuTensorMapEncodeTiled) and copied to global memory;
//                each thread that uses one acquires it (.sys: the host wrote it).
//   DEVICE_MAPS  the same array, built by a kernel (build_maps) from three
//                templates: address and rows edited in place, released; the
//                users acquire at .gpu scope.
//   EDIT         no array: each CTA edits its own A, B and C maps in shared
//                memory when its next tile belongs to another expert, publishes
//                them to a global slot of its own (cp_fenceproxy) and acquires.
enum { ONE_MAP, HOST_MAPS, DEVICE_MAPS, EDIT };

typedef struct {
    uint32_t experts, n, kblocks, ldc, tiles_n, band;
    const Batch* batch;
    const CUtensorMap* maps;  // HOST_MAPS, DEVICE_MAPS: [3 g + 0, 1, 2] = A_g, B_g, C_g
    CUtensorMap* slots;       // EDIT: 2 A/B pairs and 2 C maps (one per consumer) per CTA
    uint32_t ld_ab;           // elements from one row of A (and B) to the next
    const uint16_t* b;        // G N x ld_ab: every expert's B, in expert order
} GroupArgs;

// The range x falls in: the last i < count with start[i] <= x (a binary
// search; over first_tile, in shared memory, for the i-th expert visited; over
// first_row for the expert of a row).
static __host__ __device__ __forceinline__ uint32_t range_of(const uint32_t* start, uint32_t count,
                                                             uint32_t x) {
    uint32_t lo = 0, hi = count;  // start[lo] <= x < start[hi]
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2;
        if (start[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

typedef struct {
    uint32_t expert, row0, col0;  // row0: within the expert
} Tile;

static __device__ __forceinline__ Tile tile_of(const GroupArgs& p, const uint32_t* first_row,
                                               const uint32_t* first_tile, uint32_t split, uint32_t u) {
    Tile t;
    const uint32_t v = mixed(u, first_tile[p.experts], split), at = range_of(first_tile, p.experts, v);
    t.expert = p.batch->order[at];
    const uint32_t i = v - first_tile[at];
    const uint32_t tiles_m = (first_row[t.expert + 1] - first_row[t.expert] + BM - 1) / BM;
    const uint32_t per_band = p.band * p.tiles_n, first = i / per_band * p.band, rest = i % per_band;
    const uint32_t band_rows = min(p.band, tiles_m - first);
    t.row0 = (first + rest % band_rows) * BM;
    t.col0 = rest / band_rows * BN;
    return t;
}

// The maps a CTA edits (EDIT): A_g, B_g for the producer, C_g for each consumer.
typedef struct {
    alignas(128) CUtensorMap a, b, c[2];
} EditMaps;

// EDIT: the maps start as the templates, 4 x 128 bytes, one 16-byte piece per
// thread of threads 0..31 (the callers' first warp).
static __device__ __forceinline__ void edit_maps_from_templates(EditMaps* edit, const CUtensorMap& a_tmpl,
                                                                const CUtensorMap& b_tmpl,
                                                                const CUtensorMap& c_tmpl) {
    const uint32_t lane = threadIdx.x;
    const CUtensorMap* from = lane < 8 ? &a_tmpl : lane < 16 ? &b_tmpl : &c_tmpl;
    uint4* to = lane < 8    ? (uint4*)&edit->a
                : lane < 16 ? (uint4*)&edit->b
                            : (uint4*)&edit->c[(lane - 16) / 8];
    to[lane % 8] = ((const uint4*)from)[lane % 8];
}

// The producer's warp, all 32 lanes (cp_fenceproxy is .sync.aligned): lane 0
// issues the loads. `last` is the last ring position loaded through the pair
// of maps of slot `switches % 2` (EDIT); before the pair is rewritten, every load through
// it must have landed [M1]: a position at least STAGES back has (its stage was
// handed back, so its consumers waited for it), a later one is waited for here.
template <int SOURCE>
static __device__ __forceinline__ bool producer_maps(const GroupArgs& p, const CUtensorMap& a_tmpl,
                                                     const CUtensorMap& b_tmpl, EditMaps* edit,
                                                     const uint32_t* first_row, uint32_t g, uint32_t pos,
                                                     uint32_t switches, uint32_t last, uint64_t* full,
                                                     const CUtensorMap** a_map, const CUtensorMap** b_map) {
    const uint32_t lane = threadIdx.x % 32;
    if (SOURCE == ONE_MAP) {
        *a_map = &a_tmpl, *b_map = &b_tmpl;
    } else if (SOURCE == HOST_MAPS || SOURCE == DEVICE_MAPS) {
        *a_map = p.maps + 3 * g, *b_map = p.maps + 3 * g + 1;
        if (lane == 0) {
            if (SOURCE == HOST_MAPS) {
                tmap_acquire_sys(*a_map);  // the host wrote these maps: acquire at system scope
                tmap_acquire_sys(*b_map);
            } else {
                tmap_acquire_gpu(*a_map);  // build_maps released them at gpu scope
                tmap_acquire_gpu(*b_map);
            }
        }
    } else {
        const uint32_t slot = switches % 2;
        CUtensorMap* pair = p.slots + 6 * blockIdx.x + 2 * slot;
        bool landed = true;
        // LAB-BEGIN: retarget the pair: first every load still in flight through it landed (the full barrier of each of the last STAGES positions up to `last`); then lane 0 points the A map at expert g's rows (address, and dimension 1: its M_g rows) and the B map at its B_g; the warp publishes both to the slot, and lane 0 acquires them
        if (lane == 0 && last != 0xFFFFFFFFu)
            for (uint32_t q = pos > STAGES ? pos - STAGES : 0; q <= last && landed; ++q)
                landed = MBAR_WAIT(&full[q % STAGES], (q / STAGES) & 1);
        if (lane == 0) {
            tmap_replace_address(&edit->a, p.batch->a + (size_t)first_row[g] * p.ld_ab);
            tmap_replace_dim<1>(&edit->a, first_row[g + 1] - first_row[g]);
            tmap_replace_address(&edit->b, p.b + (size_t)g * p.n * p.ld_ab);
        }
        __syncwarp();  // lane 0's edits, visible to the warp
        tmap_cp_fenceproxy(&pair[0], &edit->a);
        tmap_cp_fenceproxy(&pair[1], &edit->b);
        if (lane == 0) {
            tmap_acquire_gpu(&pair[0]);
            tmap_acquire_gpu(&pair[1]);
        }
        // LAB-STUB: (void)pos, (void)last, (void)full, (void)first_row, (void)g;
        // LAB-END
        *a_map = &pair[0], *b_map = &pair[1];
        return __shfl_sync(0xFFFFFFFFu, landed, 0);
    }
    return true;
}

// The consumer's C map for expert g (its thread 0 stores through it). EDIT:
// warp 0 of the warpgroup rewrites its own map, once every store through it
// has read it (wait_group.read 0) [M1].
template <int SOURCE>
static __device__ __forceinline__ const CUtensorMap* consumer_map(const GroupArgs& p, EditMaps* edit,
                                                                  const uint32_t* first_row, uint32_t g,
                                                                  uint32_t wg, uint32_t tid) {
    if (SOURCE == HOST_MAPS || SOURCE == DEVICE_MAPS) {
        const CUtensorMap* m = p.maps + 3 * g + 2;
        if (tid == 0) {
            if (SOURCE == HOST_MAPS)
                tmap_acquire_sys(m);
            else
                tmap_acquire_gpu(m);
        }
        return m;
    }
    CUtensorMap* slot = p.slots + 6 * blockIdx.x + 4 + wg;
    if (tid < 32) {
        if (tid == 0) {
            bulk_wait_group_read<0>();  // every store through the map has read it
            tmap_replace_address(&edit->c[wg], p.batch->c + (size_t)first_row[g] * p.ldc);
            tmap_replace_dim<1>(&edit->c[wg], first_row[g + 1] - first_row[g]);
        }
        __syncwarp();
        tmap_cp_fenceproxy(slot, &edit->c[wg]);
        if (tid == 0) tmap_acquire_gpu(slot);
    }
    return slot;
}

// Registers to C, masked at the expert's rows and C's columns (ONE_MAP): 8-byte
// stores, the 4 lanes of a row covering 32 contiguous bytes.
static __device__ __forceinline__ void store_masked(const float (&d)[128], float* c, uint32_t rows,
                                                    uint32_t n, uint32_t ldc, uint32_t row0, uint32_t col0) {
    const uint32_t t = threadIdx.x % 128, r = row0 + 16 * (t / 32) + t % 32 / 4, c0 = col0 + 2 * (t % 4);
#pragma unroll
    for (uint32_t h = 0; h < 2; ++h) {
        if (r + 8 * h >= rows) continue;
        float* q = c + (size_t)(r + 8 * h) * ldc;
#pragma unroll
        for (uint32_t i = 0; i < BN / 8; ++i)
            if (c0 + 8 * i < n)
                *(float2*)(q + c0 + 8 * i) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
    }
}

// Registers to C through shared memory and the TMA store (09's
// EPI_TMA_STORE): 32 columns at a time into a 64 x 32 box, 128B-swizzled,
// two boxes in turns; the C map clips the store at the expert's last row.
static __device__ __forceinline__ void store_boxes(const float (&d)[128], const CUtensorMap* c_map,
                                                   float* boxes, uint32_t n, uint32_t row0, uint32_t col0,
                                                   uint32_t tid, uint32_t wg, uint32_t& chunks) {
    const uint32_t warp = tid / 32, lane = tid % 32, r = 16 * warp + lane / 4, q = lane % 4;
#pragma unroll
    for (uint32_t ch = 0; ch < BN / EPI_COLS; ++ch) {
        if (col0 + ch * EPI_COLS >= n) break;
        float* box = boxes + chunks++ % 2 * (EPI_BOX_BYTES / 4);
        if (tid == 0) bulk_wait_group_read<1>();  // the store that last read this box is done reading
        if (wg == 0)
            named_barrier_sync<1, 128>();
        else
            named_barrier_sync<2, 128>();
#pragma unroll
        for (uint32_t j = 0; j < EPI_COLS / 8; ++j) {
            const uint32_t i = ch * (EPI_COLS / 8) + j;
#pragma unroll
            for (uint32_t h = 0; h < 2; ++h) {
                const uint32_t row = r + 8 * h, offset = row * 128 + (8 * j + 2 * q) * 4;
                *(float2*)((uint8_t*)box + (offset ^ (row % 8) << 4)) =
                    make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            }
        }
        SHADOW_WROTE(box, EPI_BOX_BYTES);
        fence_proxy_async_shared();  // every writer, before the barrier
        if (wg == 0)
            named_barrier_sync<1, 128>();
        else
            named_barrier_sync<2, 128>();
        if (tid == 0) {
            tma_store_2d(c_map, (int32_t)(col0 + ch * EPI_COLS), (int32_t)row0, box);
            bulk_commit_group();
        }
    }
}

template <int SOURCE>
__global__ void __launch_bounds__(THREADS, 1)
    grouped_gemm(const __grid_constant__ CUtensorMap a_tmpl, const __grid_constant__ CUtensorMap b_tmpl,
                 const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p) {
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ uint32_t first_tile[MAX_EXPERTS + 1];  // searched for every tile: here, not in global memory
    const uint32_t* first_row = p.batch->first_row;
    __shared__ EditMaps edit;
    uint8_t* stages = tma_smem_base<1024>();  // [STAGES][A: 128 x 64 | B: 256 x 64] bf16, 128B-swizzled
    float* epi_boxes = (float*)(stages + STAGES * STAGE_BYTES);  // [2 consumers][2][64][32] fp32
    for (uint32_t i = threadIdx.x; i <= p.experts; i += THREADS) first_tile[i] = p.batch->first_tile[i];
    if (SOURCE == EDIT && threadIdx.x < 32) edit_maps_from_templates(&edit, a_tmpl, b_tmpl, c_tmpl);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);   // the producer's arrive.expect_tx
            mbar_init(&empty[s], 2);  // each consumer warpgroup
        }
        mbar_fence_init();
    }
    __syncthreads();
    const uint32_t units = first_tile[p.experts], split = p.batch->split;
    if (threadIdx.x < 128) {  // the producer warpgroup: its first warp loads
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x >= 32) return;
        const uint32_t lane = threadIdx.x;
        uint32_t pos = 0, expert = 0xFFFFFFFFu, switches = 0, last0 = 0xFFFFFFFFu, last1 = 0xFFFFFFFFu;
        const CUtensorMap *a_map = NULL, *b_map = NULL;
        bool ok = true;
        for (uint32_t u = blockIdx.x; u < units && ok; u += gridDim.x) {
            const Tile t = tile_of(p, first_row, first_tile, split, u);
            if (t.expert != expert) {
                ok = producer_maps<SOURCE>(p, a_tmpl, b_tmpl, &edit, first_row, t.expert, pos, switches,
                                           switches % 2 ? last1 : last0, full, &a_map, &b_map);
                expert = t.expert, ++switches;
            }
            const int32_t a_row = (int32_t)(t.row0 + (SOURCE == ONE_MAP ? first_row[t.expert] : 0));
            const int32_t b_row = (int32_t)(t.col0 + (SOURCE == ONE_MAP ? t.expert * p.n : 0));
            for (uint32_t kb = 0; kb < p.kblocks && ok; ++kb, ++pos) {
                const uint32_t s = pos % STAGES;
                if (lane == 0) {
                    if (pos >= STAGES) ok = MBAR_WAIT(&empty[s], (pos / STAGES - 1) & 1);
                    if (ok) {
                        uint8_t* stage = stages + s * STAGE_BYTES;
                        mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
                        tma_load_2d(stage, a_map, (int32_t)(kb * BK), a_row, &full[s]);
                        tma_load_2d(stage + A_BYTES, b_map, (int32_t)(kb * BK), b_row, &full[s]);
                    }
                }
                ok = __shfl_sync(0xFFFFFFFFu, ok, 0);
            }
            ((switches - 1) % 2 ? last1 : last0) = pos - 1;  // the last position through this pair
        }
        return;
    }
    setmaxnreg_inc<CONSUMER_REGS>();
    const uint32_t wg = threadIdx.x / 128 - 1, tid = threadIdx.x % 128;
    float* boxes = epi_boxes + wg * 2 * (EPI_BOX_BYTES / 4);
    float d[128];
    uint32_t pos = 0, chunks = 0, expert = 0xFFFFFFFFu;
    const CUtensorMap* c_map = NULL;
    for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
        const Tile t = tile_of(p, first_row, first_tile, split, u);
        const uint32_t rows = first_row[t.expert + 1] - first_row[t.expert], row0 = t.row0 + wg * WG_M;
        if (row0 >= rows) {  // this warpgroup's 64 rows all lie past the expert's: no MMA, no store,
            for (uint32_t j = 0; j < p.kblocks; ++j, ++pos) {  // only each stage handed back once it landed
                MBAR_WAIT(&full[pos % STAGES], (pos / STAGES) & 1);
                if (tid == 0) mbar_arrive(&empty[pos % STAGES]);
            }
        } else {
            for (uint32_t j = 0; j < p.kblocks; ++j, ++pos) {
                const uint32_t s = pos % STAGES;
                const uint8_t* stage = stages + s * STAGE_BYTES;
                MBAR_WAIT(&full[s], (pos / STAGES) & 1);  // a wait that gives up is reported by the host
                const uint64_t da = smem_desc_sw128(stage + wg * WG_M * ROW_BYTES),
                               db = smem_desc_sw128(stage + A_BYTES);
                wgmma_fence();
#pragma unroll
                for (uint32_t k = 0; k < BK / K_STEP; ++k)  // + 2 in the start field: 32 bytes, 16 bf16
                    wgmma_m64n256k16_bf16(d, da + 2 * k, db + 2 * k, j > 0 || k > 0);
                wgmma_commit_group();
                if (j > 0) {
                    wgmma_wait_group<1>();  // the batch before this one is done: its stage is free
                    if (tid == 0) mbar_arrive(&empty[(pos - 1) % STAGES]);
                }
            }
            wgmma_wait_group<0>();
            wgmma_fence_operands(d);
            if (tid == 0) mbar_arrive(&empty[(pos - 1) % STAGES]);
        }
        if (SOURCE == ONE_MAP) {
            store_masked(d, p.batch->c + (size_t)first_row[t.expert] * p.ldc, rows, p.n, p.ldc, row0, t.col0);
            continue;
        }
        if (t.expert != expert) c_map = consumer_map<SOURCE>(p, &edit, first_row, t.expert, wg, tid);
        expert = t.expert;
        if (row0 < rows) store_boxes(d, c_map, boxes, p.n, row0, t.col0, tid, wg, chunks);
    }
    if (SOURCE != ONE_MAP && tid == 0) bulk_wait_group<0>();  // every store done before the block ends
}

// DEVICE_MAPS: one thread per map builds it from its template into the array:
// address and rows edited in place in global memory, then released to the
// tensormap proxy by the same thread (08's global path). Experts without rows
// get no maps (no tile uses them, and a dimension of 0 is not a valid map).
__global__ void build_maps(const __grid_constant__ CUtensorMap a_tmpl,
                           const __grid_constant__ CUtensorMap b_tmpl,
                           const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p,
                           CUtensorMap* maps) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x, g = i / 3, which = i % 3;
    if (g >= p.experts) return;
    const Batch* b = p.batch;
    const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
    if (rows == 0) return;
    CUtensorMap* m = &maps[i];
    const CUtensorMap* from = which == 0 ? &a_tmpl : which == 1 ? &b_tmpl : &c_tmpl;
    for (int q = 0; q < 8; ++q) ((uint4*)m)[q] = ((const uint4*)from)[q];
    if (which == 0) {
        tmap_replace_address_global(m, b->a + (size_t)b->first_row[g] * p.ld_ab);
        tmap_replace_dim_global<1>(m, rows);
    } else if (which == 1) {
        tmap_replace_address_global(m, p.b + (size_t)g * p.n * p.ld_ab);
    } else {
        tmap_replace_address_global(m, b->c + (size_t)b->first_row[g] * p.ldc);
        tmap_replace_dim_global<1>(m, rows);
    }
    tmap_release_gpu();
}

// The device's share of an expert switch (EDIT), alone: one warp does for every
// expert with rows, in turn, what the kernel does when a CTA's next tile is
// another expert's: the producer's retarget of A and B (producer_maps) and a
// consumer's of C (consumer_map). No load or store is in flight, so neither
// waits. Its %globaltimer span, in ns, goes to *ns.
__global__ void __launch_bounds__(32)
    retarget_alone(const __grid_constant__ CUtensorMap a_tmpl, const __grid_constant__ CUtensorMap b_tmpl,
                   const __grid_constant__ CUtensorMap c_tmpl, const __grid_constant__ GroupArgs p,
                   unsigned long long* ns) {
    __shared__ EditMaps edit;
    edit_maps_from_templates(&edit, a_tmpl, b_tmpl, c_tmpl);
    __syncwarp();
    const uint32_t* first_row = p.batch->first_row;
    const CUtensorMap *a_map, *b_map;
    uint32_t switches = 0;
    const uint64_t start = globaltimer_ns();
#pragma unroll 1
    for (uint32_t g = 0; g < p.experts; ++g) {
        if (first_row[g + 1] == first_row[g]) continue;  // no tile, no switch
        producer_maps<EDIT>(p, a_tmpl, b_tmpl, &edit, first_row, g, 0, switches++, 0xFFFFFFFFu, NULL, &a_map,
                            &b_map);
        consumer_map<EDIT>(p, &edit, first_row, g, 0, threadIdx.x);
    }
    __syncwarp();
    if (threadIdx.x == 0) *ns = globaltimer_ns() - start;
}

// ---- The reference: a plain GPU GEMM per expert, itself checked on the CPU ----
// 09's (09_gemm/reference.cuh): shared-memory tiling, fp32 FMAs, no tensor
// cores, 64 x 64 outputs per block; blockIdx.z is the expert.
__global__ void __launch_bounds__(256)
    reference_grouped(const Batch* batch, const uint16_t* b_all, uint32_t n, uint32_t k, uint32_t ld_ab,
                      uint32_t ldc) {
    const uint32_t g = blockIdx.z, m = batch->first_row[g + 1] - batch->first_row[g];
    if (blockIdx.y * REF_TILE >= m) return;  // the grid covers the largest expert
    reference_tile(batch->a + (size_t)batch->first_row[g] * ld_ab, b_all + (size_t)g * n * ld_ab,
                   batch->c + (size_t)batch->first_row[g] * ldc, m, n, k, ld_ab, ldc);
}

// ---- The problem (host) ---------------------------------------------------------
// Three batches share B (the experts' weights) and the launch sizes: batch 0
// (every part), batch 1 (new tokens: another draw of M_g, new A and C
// buffers; the graphs captured on batch 0 are replayed on it), and the
// dense problem (one expert of all the rows: the reference's shape).
enum { BATCH_0, BATCH_1, DENSE, NUM_BATCHES };

typedef struct {
    const Cli* cli;
    const char* prefix;
    cudaStream_t s;
    cublasHandle_t h;
    uint32_t experts, total, n, k, ld_ab, ldc, band;
    uint32_t skew;  // the Zipf exponent in hundredths
    uint16_t* b;    // G N x ld_ab
    uint16_t* a[2];
    float* out[2];  // framed outputs (FRAME guard rows and columns), one per buffer set
    size_t framed_words;
    Batch* staged;  // pinned: the batch the next copy sends to the device
    Batch host[NUM_BATCHES];
    uint32_t experts_of[NUM_BATCHES];
    Batch* dev;  // the batch the kernels read
    uint32_t* want[NUM_BATCHES];
    CUtensorMap* maps;                                // 3 per expert (HOST_MAPS, DEVICE_MAPS)
    CUtensorMap* host_maps;                           // pinned: the host's encoding of them
    CUtensorMap* slots;                               // 6 per CTA (EDIT)
    CUtensorMap a_tmpl[2], b_tmpl, c_tmpl[2], b_all;  // templates per buffer set; B over every expert
    uint32_t grid;                                    // CTAs of the persistent kernel
    int batch;                                        // the batch on the device now
} Problem;

static double problem_flops(const Problem* q) {
    return 2.0 * q->total * q->n * q->k;
}
static uint32_t output_ld(uint32_t n) {
    return round_up(n, 4) + 2 * FRAME;
}
static float* c_of(const Problem* q, int set) {
    return q->out[set] + (size_t)FRAME * q->ldc + FRAME;
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

// Make batch i the one the kernels read (a copy on the stream, from pinned memory).
static void use_batch(Problem* q, int i) {
    CUDA_CHECK(cudaStreamSynchronize(q->s));  // the staged copy is not in use
    *q->staged = q->host[i];
    CUDA_CHECK(cudaMemcpyAsync(q->dev, q->staged, sizeof(Batch), cudaMemcpyHostToDevice, q->s));
    q->batch = i;
}
// Batch i's schedule planned again (or the other one), sent to the device.
static void plan_batch(Problem* q, int i, bool other) {
    Batch* b = &q->host[i];
    uint32_t rows[MAX_EXPERTS];
    for (uint32_t g = 0; g < q->experts_of[i]; ++g) rows[g] = b->first_row[g + 1] - b->first_row[g];
    fill_batch(b, rows, q->experts_of[i], q->n, other);
    use_batch(q, i);
}
static int set_of(int batch) {
    return batch == BATCH_1 ? 1 : 0;
}

// An operand's map: rows x K bf16, boxes of 64 (K) x box_rows, 128B-swizzled.
static CUtensorMap operand_map(const Problem* q, const uint16_t* p, uint32_t rows, uint32_t box_rows,
                               const char* what) {
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, p, rows, q->k, (uint64_t)q->ld_ab * 2, box_rows, BK,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    return make_tensor_map(&spec, what);
}
static CUtensorMap output_map(const Problem* q, float* c, uint32_t rows, const char* what) {
    const TensorMapSpec spec =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c, rows, q->n, (uint64_t)q->ldc * 4, WG_M, EPI_COLS,
                       CU_TENSOR_MAP_SWIZZLE_128B);
    return make_tensor_map(&spec, what);
}

// HOST_MAPS: the host encodes expert g's three maps of batch i.
static void encode_host_maps(Problem* q, int i, CUtensorMap* maps) {
    const Batch* b = &q->host[i];
    for (uint32_t g = 0; g < q->experts_of[i]; ++g) {
        const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
        if (rows == 0) continue;  // no tile uses it, and a 0-row map is invalid
        maps[3 * g] = operand_map(q, b->a + (size_t)b->first_row[g] * q->ld_ab, rows, BM, "A_g");
        maps[3 * g + 1] = operand_map(q, q->b + (size_t)g * q->n * q->ld_ab, q->n, BN, "B_g");
        maps[3 * g + 2] = output_map(q, b->c + (size_t)b->first_row[g] * q->ldc, rows, "C_g");
    }
}

static GroupArgs group_args(const Problem* q) {
    GroupArgs p;
    memset(&p, 0, sizeof p);
    p.experts = q->experts_of[q->batch], p.n = q->n, p.kblocks = (q->k + BK - 1) / BK, p.ldc = q->ldc;
    p.tiles_n = (q->n + BN - 1) / BN, p.band = q->band, p.batch = q->dev, p.maps = q->maps,
    p.slots = q->slots;
    p.ld_ab = q->ld_ab, p.b = q->b;
    return p;
}

// The grouped kernel on the batch the device holds: `grid` CTAs (one per SM
// at most, fewer if there are fewer tiles). ONE_MAP reads the templates as
// its maps: A over every row of the buffer set, B over every expert's rows.
template <int SOURCE>
static void launch_grouped(const Problem* q, const GroupArgs& p, uint32_t grid) {
    const int set = set_of(q->batch);
    grouped_gemm<SOURCE><<<grid, THREADS, SMEM_BYTES, q->s>>>(
        q->a_tmpl[set], SOURCE == ONE_MAP ? q->b_all : q->b_tmpl, q->c_tmpl[set], p);
}
static uint32_t grid_for(const Problem* q, uint32_t tiles) {
    return tiles < q->grid ? (tiles ? tiles : 1) : q->grid;
}
template <int SOURCE>
static void run_grouped(const Problem* q) {
    const GroupArgs p = group_args(q);
    if (SOURCE == DEVICE_MAPS) {  // the maps of this batch, built on the GPU first
        const int set = set_of(q->batch);
        build_maps<<<(3 * p.experts + 127) / 128, 128, 0, q->s>>>(q->a_tmpl[set], q->b_tmpl, q->c_tmpl[set],
                                                                  p, q->maps);
    }
    launch_grouped<SOURCE>(q, p, grid_for(q, q->host[q->batch].first_tile[p.experts]));
}

// The HOST_MAPS part's work on the GPU: the maps the host encoded (pinned)
// copied to the array, then the kernel. The encoding itself is host time:
// a TIME line measures it.
static void run_host_maps(const Problem* q) {
    CUDA_CHECK(cudaMemcpyAsync(q->maps, q->host_maps, 3 * sizeof(CUtensorMap) * q->experts_of[q->batch],
                               cudaMemcpyHostToDevice, q->s));
    run_grouped<HOST_MAPS>(q);
}

// ---- The check: every expert's C, bit for bit, and the frame -----------------
// The reference (reference_grouped) runs into the framed output; the CPU
// recomputes a row of each expert (its last: where a tile ends) and a few
// hashed rows; frame and row padding must still hold the poison. Its output
// is the batch's expected output.
#define CPU_ROWS 8      // hashed rows the CPU recomputes
#define CPU_EXPERTS 16  // experts whose last row it recomputes (every one if there are no more)

// Row `row` of C (expert g's) on the CPU: exact integer sums, column by column.
static void cpu_row(const Problem* q, uint32_t row, uint32_t g, uint32_t a_seed, int* arow, float* out) {
    const uint32_t b_seed = q->cli->seed ^ 0xB0Bu;  // B is the same in every batch
    for (uint32_t kk = 0; kk < q->k; ++kk) arow[kk] = input_value(a_seed, (uint64_t)row * q->k + kk);
    for (uint32_t j = 0; j < q->n; ++j) {
        const uint64_t brow = (uint64_t)g * q->n + j;
        int64_t sum = 0;
        for (uint32_t kk = 0; kk < q->k; ++kk) sum += arow[kk] * input_value(b_seed, brow * q->k + kk);
        out[j] = (float)sum;  // exact: |sum| <= 16 K <= 2^24
    }
}

static uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint32_t a_seed(const Problem* q, int set) {
    return q->cli->seed + 17u * (uint32_t)set;
}

static void run_reference(Problem* q, int batch, const char* name) {
    use_batch(q, batch);
    const int set = set_of(batch);
    const Batch* b = &q->host[batch];
    const uint32_t experts = q->experts_of[batch];
    uint32_t largest = 0;
    for (uint32_t g = 0; g < experts; ++g) largest = max(largest, b->first_row[g + 1] - b->first_row[g]);
    poison_device(q->out[set], q->framed_words * 4, q->s);
    const dim3 grid((q->n + REF_TILE - 1) / REF_TILE, (largest + REF_TILE - 1) / REF_TILE, experts);
    if (largest) reference_grouped<<<grid, 256, 0, q->s>>>(q->dev, q->b, q->n, q->k, q->ld_ab, q->ldc);
    CHECK_LAUNCH();
    const uint32_t* got = read_back(q->out[set], q->framed_words, q->s);
    size_t wrong = 0, checked = 0;
    uint32_t rows_checked[MAX_EXPERTS + CPU_ROWS], nrows = 0;
    const uint32_t every = experts > CPU_EXPERTS ? experts / CPU_EXPERTS : 1;
    for (uint32_t g = 0; g < experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        if (m && (g % every == 0 || m == 1)) rows_checked[nrows++] = b->first_row[g + 1] - 1;
    }
    for (uint32_t i = 0; i < CPU_ROWS && q->total; ++i)
        rows_checked[nrows++] = seeded_word(0xC0FFEEu, i) % q->total;
    int* arow = (int*)xmalloc(sizeof(int) * q->k, "a row of A");
    float* want = (float*)xmalloc(sizeof(float) * q->n, "a row of C");
    for (uint32_t i = 0; i < nrows; ++i) {
        const uint32_t r = rows_checked[i], g = range_of(b->first_row, experts, r);
        cpu_row(q, r, g, a_seed(q, set), arow, want);
        for (uint32_t j = 0; j < q->n; ++j, ++checked)
            wrong += got[(FRAME + (size_t)r) * q->ldc + FRAME + j] != float_bits(want[j]);
    }
    free(arow);
    free(want);
    for (size_t w = 0; w < q->framed_words; ++w) {
        const size_t row = w / q->ldc, col = w % q->ldc;
        if (row >= FRAME && row < FRAME + q->total && col >= FRAME && col < FRAME + q->n) continue;
        wrong += got[w] != POISON_WORD;
        ++checked;
    }
    char full[64];
    snprintf(full, sizeof full, "%s%s", q->prefix, name);
    report_check(full, wrong, checked);
    q->want[batch] = (uint32_t*)xmalloc(q->framed_words * 4, "an expected output");
    memcpy(q->want[batch], got, q->framed_words * 4);
}

// Every word of the framed output against the batch's expected one; on a
// failure, which experts are wrong (a stale map shows as whole experts).
static size_t check_batch(const Problem* q, const char* name) {
    const int set = set_of(q->batch);
    const uint32_t* got = read_back(q->out[set], q->framed_words, q->s);
    const size_t wrong = check_words(name, got, q->want[q->batch], q->framed_words);
    if (wrong) {
        const Batch* b = &q->host[q->batch];
        uint32_t bad = 0, outside = 0;
        uint8_t seen[MAX_EXPERTS] = {0};
        for (size_t w = 0; w < q->framed_words; ++w) {
            if (got[w] == q->want[q->batch][w]) continue;
            const size_t row = w / q->ldc, col = w % q->ldc;
            if (row < FRAME || row >= FRAME + q->total || col < FRAME || col >= FRAME + q->n) {
                ++outside;
                continue;
            }
            const uint32_t g = range_of(b->first_row, q->experts_of[q->batch], (uint32_t)(row - FRAME));
            bad += !seen[g], seen[g] = 1;
        }
        printf("       wrong in %u of %u experts; %u words written outside C\n", bad, q->experts_of[q->batch],
               outside);
    }
    return wrong;
}

// One part: poison the batch's output, run, check, and (if it passed) time
// it: PERF line prefix + name, 2 sum(M_g) N K flops per run.
#define GROUP_PART(q, name, ...)                                                                          \
    do {                                                                                                  \
        char name_[64];                                                                                   \
        snprintf(name_, sizeof name_, "%s%s", (q)->prefix, (name));                                       \
        poison_device((q)->out[set_of((q)->batch)], (q)->framed_words * 4, (q)->s);                       \
        CHECK_THEN_TIME(name_, (q)->cli, (q)->s, problem_flops(q), check_batch((q), name_), __VA_ARGS__); \
    } while (0)

// ---- cuBLAS: one call per expert, and the grouped call -----------------------
// 09's call (cuBLAS is column-major: C^T = B A^T, the "TN" GEMM) on expert
// g's rows; an expert without rows is skipped (cuBLAS takes m = 0, but a
// launch that does nothing still costs its launch).
static void cublas_expert(const Problem* q, const Batch* b, uint32_t g) {
    const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
    if (rows == 0) return;
    const float one = 1.f, zero = 0.f;
    CUBLAS_CHECK(cublasGemmEx(q->h, CUBLAS_OP_T, CUBLAS_OP_N, (int)q->n, (int)rows, (int)q->k, &one,
                              q->b + (size_t)g * q->n * q->ld_ab, CUDA_R_16BF, (int)q->ld_ab,
                              b->a + (size_t)b->first_row[g] * q->ld_ab, CUDA_R_16BF, (int)q->ld_ab, &zero,
                              b->c + (size_t)b->first_row[g] * q->ldc, CUDA_R_32F, (int)q->ldc,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
static void cublas_loop(const Problem* q) {
    const Batch* b = &q->host[q->batch];
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) cublas_expert(q, b, g);
}

// Ours, one launch per expert: the grouped kernel on a batch of one expert
// (loop_batches[g] on the device: its rows of A and C, 1 expert), through
// the host's maps of that expert.
static void ours_loop(const Problem* q, const Batch* loop_batches) {
    const Batch* b = &q->host[q->batch];
    GroupArgs p = group_args(q);
    p.experts = 1;
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) {
        const uint32_t tiles = tiles_of(b->first_row[g + 1] - b->first_row[g], q->n);
        if (tiles == 0) continue;
        p.batch = loop_batches + g, p.maps = q->maps + 3 * g;
        launch_grouped<HOST_MAPS>(q, p, grid_for(q, tiles));
    }
}

// cublasGemmGroupedBatchedEx: every expert with rows as a group of one GEMM.
// It answers NOT_SUPPORTED for some type combinations; then a note says so
// and the part is not timed.
typedef struct {
    int count, m[MAX_EXPERTS], n[MAX_EXPERTS], k[MAX_EXPERTS], lda[MAX_EXPERTS], ldb[MAX_EXPERTS],
        ldc[MAX_EXPERTS], size[MAX_EXPERTS];
    cublasOperation_t ta[MAX_EXPERTS], tb[MAX_EXPERTS];
    float alpha[MAX_EXPERTS], beta[MAX_EXPERTS];
    const void** ptrs;  // device: [0, count) B_g, [count, 2 count) A_g, [2 count, 3 count) C_g
} GroupedCall;

static cublasStatus_t cublas_grouped(const Problem* q, const GroupedCall* c, cudaDataType c_type) {
    return cublasGemmGroupedBatchedEx(q->h, c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->ptrs, CUDA_R_16BF,
                                      c->lda, c->ptrs + c->count, CUDA_R_16BF, c->ldb, c->beta,
                                      (void* const*)(c->ptrs + 2 * c->count), c_type, c->ldc, c->count,
                                      c->size, CUBLAS_COMPUTE_32F);
}

static void grouped_batched_part(const Problem* q) {
    const Batch* b = &q->host[q->batch];
    GroupedCall c;
    memset(&c, 0, sizeof c);
    const void* host_ptrs[3 * MAX_EXPERTS];
    for (uint32_t g = 0; g < q->experts_of[q->batch]; ++g) {
        const uint32_t rows = b->first_row[g + 1] - b->first_row[g];
        if (rows == 0) continue;
        const int i = c.count++;
        c.ta[i] = CUBLAS_OP_T, c.tb[i] = CUBLAS_OP_N, c.m[i] = (int)q->n, c.n[i] = (int)rows,
        c.k[i] = (int)q->k;
        c.lda[i] = c.ldb[i] = (int)q->ld_ab, c.ldc[i] = (int)q->ldc, c.size[i] = 1, c.alpha[i] = 1.f;
        host_ptrs[i] = q->b + (size_t)g * q->n * q->ld_ab;
        host_ptrs[MAX_EXPERTS + i] = b->a + (size_t)b->first_row[g] * q->ld_ab;
        host_ptrs[2 * MAX_EXPERTS + i] = b->c + (size_t)b->first_row[g] * q->ldc;
    }
    const void* packed[3 * MAX_EXPERTS];
    for (int w = 0; w < 3; ++w)
        for (int i = 0; i < c.count; ++i) packed[w * c.count + i] = host_ptrs[w * MAX_EXPERTS + i];
    CUDA_CHECK(cudaMalloc((void**)&c.ptrs, 3 * sizeof(void*) * (size_t)c.count));
    CUDA_CHECK(cudaMemcpy(c.ptrs, packed, 3 * sizeof(void*) * (size_t)c.count, cudaMemcpyHostToDevice));
    char name[64];
    snprintf(name, sizeof name, "%scublas_grouped_batched", q->prefix);
    poison_device(q->out[set_of(q->batch)], q->framed_words * 4, q->s);
    const cublasStatus_t st = cublas_grouped(q, &c, CUDA_R_32F);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) {
        // What it takes instead: the same call with C in bf16 (into the poisoned output; not this
        // problem's output type, so neither checked nor timed).
        const cublasStatus_t bf16_out = cublas_grouped(q, &c, CUDA_R_16BF);
        CUDA_CHECK(cudaStreamSynchronize(q->s));
        printf(
            "note   %s: cublasGemmGroupedBatchedEx answers %s for bf16 inputs, fp32 output, fp32 compute; "
            "with a bf16 output, %s\n",
            name, cublasGetStatusName(st), cublasGetStatusName(bf16_out));
    } else {
        GROUP_PART(q, "cublas_grouped_batched", CUBLAS_CHECK(cublas_grouped(q, &c, CUDA_R_32F)));
    }
    CUDA_CHECK(cudaStreamSynchronize(q->s));
    CUDA_CHECK(cudaFree(c.ptrs));
}

// ---- Under CUDA graphs ------------------------------------------------------------
// A graph of one batch's work, captured while batch 0 is on the device: a
// copy of the staged batch (pinned: a replay copies whatever the host put
// there since) and the work. Replayed on batch 1 (other sizes, other A and C
// buffers), each way of getting the maps must still find batch 1's:
//   graph_one_map      the maps are kernel parameters, frozen at capture:
//                      the host swaps in the maps of batch 1's buffers
//                      (encoded once per set) and updates the kernel node
//                      (cudaGraphExecKernelNodeSetParams);
//   graph_host_maps    the host encodes batch 1's maps into the pinned array
//                      the graph's copy node sends;
//   graph_device_maps  build_maps, inside the graph, reads the new batch;
//   graph_device_edit  the kernel reads the new batch and edits its own maps.
typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaGraphNode_t kernel;  // the grouped kernel's node (of `graph`, kept for the updates)
} Graph;

static Graph capture(Problem* q, void (*work)(const Problem*)) {
    Graph gr;
    cudaGraph_t& graph = gr.graph;
    CUDA_CHECK(cudaStreamBeginCapture(q->s, cudaStreamCaptureModeThreadLocal));
    CUDA_CHECK(cudaMemcpyAsync(q->dev, q->staged, sizeof(Batch), cudaMemcpyHostToDevice, q->s));
    work(q);
    CUDA_CHECK(cudaStreamEndCapture(q->s, &graph));
    size_t n = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, NULL, &n));
    cudaGraphNode_t* nodes = (cudaGraphNode_t*)xmalloc(n * sizeof *nodes, "a graph's nodes");
    CUDA_CHECK(cudaGraphGetNodes(graph, nodes, &n));
    gr.kernel = NULL;
    for (size_t i = 0; i < n; ++i) {
        cudaGraphNodeType type;
        CUDA_CHECK(cudaGraphNodeGetType(nodes[i], &type));
        if (type == cudaGraphNodeTypeKernel) gr.kernel = nodes[i];  // the last kernel: the grouped GEMM
    }
    free(nodes);
    CUDA_CHECK(cudaGraphInstantiate(&gr.exec, graph, 0));
    return gr;
}

static void one_map_work(const Problem* q) {
    run_grouped<ONE_MAP>(q);
}
static void host_maps_work(const Problem* q) {
    run_host_maps(q);
}
static void device_maps_work(const Problem* q) {
    run_grouped<DEVICE_MAPS>(q);
}
static void device_edit_work(const Problem* q) {
    run_grouped<EDIT>(q);
}

// ONE_MAP's kernel node, pointed at batch `i`'s buffers: its four parameters
// (A's map, B's, C's, the arguments) replaced in the instantiated graph.
static void update_one_map_node(const Problem* q, const Graph* gr) {
    cudaKernelNodeParams params = {};
    const int set = set_of(q->batch);
    GroupArgs p = group_args(q);
    CUtensorMap a = q->a_tmpl[set], b = q->b_all, c = q->c_tmpl[set];
    void* args[4] = {&a, &b, &c, &p};
    params.func = (void*)grouped_gemm<ONE_MAP>;
    params.gridDim = dim3(grid_for(q, q->host[q->batch].first_tile[p.experts])),
    params.blockDim = dim3(THREADS), params.sharedMemBytes = SMEM_BYTES;
    params.kernelParams = args;
    CUDA_CHECK(cudaGraphExecKernelNodeSetParams(gr->exec, gr->kernel, &params));
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

// A graph replayed on batch 1: the host's part of the update first (`update`),
// then the replay, checked and timed.
#define GRAPH_PART(q, name, gr, update)                                      \
    do {                                                                     \
        CUDA_CHECK(cudaStreamSynchronize((q)->s));                           \
        *(q)->staged = (q)->host[BATCH_1];                                   \
        (q)->batch = BATCH_1;                                                \
        update;                                                              \
        GROUP_PART(q, name, CUDA_CHECK(cudaGraphLaunch((gr).exec, (q)->s))); \
    } while (0)

// The host's share of a new batch, in microseconds (median of 5): encoding
// its 3 G maps (HOST_MAPS), updating ONE_MAP's kernel node; then the device's
// retargets alone, and the host's submit of a device-edit graph replay.
static void report_host_costs(Problem* q, const Graph* one_map, const Graph* device_edit) {
    float encode[5], update[5];
    uint32_t maps = 0;
    for (uint32_t g = 0; g < q->experts_of[BATCH_1]; ++g)
        maps += 3 * (q->host[BATCH_1].first_row[g + 1] > q->host[BATCH_1].first_row[g]);
    for (int r = 0; r < 5; ++r) {
        double t0 = now_seconds();
        encode_host_maps(q, BATCH_1, q->host_maps);
        encode[r] = (float)((now_seconds() - t0) * 1e6);
        t0 = now_seconds();
        update_one_map_node(q, one_map);
        update[r] = (float)((now_seconds() - t0) * 1e6);
    }
    const float e = median_of(encode, 5), u = median_of(update, 5);
    record_time_line(
        "%shost_encode: %u maps in %.1f us on the host (%.2f us per map: cuTensorMapEncodeTiled)", q->prefix,
        maps, e, maps ? e / maps : 0.f);
    record_time_line("%sgraph_node_update: cudaGraphExecKernelNodeSetParams %.1f us on the host", q->prefix,
                     u);
    // build_maps alone on the GPU: the device's share of a new batch (DEVICE_MAPS).
    const GroupArgs p = group_args(q);
    Timer t;
    for (t = timer_begin(q->cli, q->s, NULL, 0); timer_next(&t);)
        build_maps<<<(3 * p.experts + 127) / 128, 128, 0, q->s>>>(q->a_tmpl[1], q->b_tmpl, q->c_tmpl[1], p,
                                                                  q->maps);
    record_time_line("%sbuild_maps: %u maps in %.1f us on the GPU", q->prefix, maps, t.median_ms * 1e3);
    // The device's share in device_edit: one warp's retargets, expert after expert (retarget_alone), its
    // %globaltimer span. Then what the host spends submitting a replay of the device_edit graph, each
    // replay finished before the next; the replay's GPU time is graph_device_edit's PERF line.
    unsigned long long* span_dev;
    CUDA_CHECK(cudaMalloc((void**)&span_dev, sizeof *span_dev));
    float edit_us[5], submit_us[5];
    for (int r = 0; r < 5; ++r) {
        unsigned long long span = 0;
        retarget_alone<<<1, 32, 0, q->s>>>(q->a_tmpl[1], q->b_tmpl, q->c_tmpl[1], p, span_dev);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(&span, span_dev, sizeof span, cudaMemcpyDeviceToHost, q->s));
        CUDA_CHECK(cudaStreamSynchronize(q->s));
        edit_us[r] = (float)(span * 1e-3);
        const double t0 = now_seconds();
        CUDA_CHECK(cudaGraphLaunch(device_edit->exec, q->s));
        submit_us[r] = (float)((now_seconds() - t0) * 1e6);
        CUDA_CHECK(cudaStreamSynchronize(q->s));
        SHADOW(between_runs(q->s));  // replays keep their grid id: the shadow build audits each apart
    }
    CUDA_CHECK(cudaFree(span_dev));
    const uint32_t switches = maps / 3;  // one per expert with rows
    const float edit = median_of(edit_us, 5);
    record_time_line(
        "%sdevice_edit: %u expert switches in %.1f us on one warp (%.2f us per expert: A and B as the "
        "producer retargets them, C as a consumer does)",
        q->prefix, switches, edit, switches ? edit / switches : 0.f);
    char name[64];
    snprintf(name, sizeof name, "%sgraph_device_edit", q->prefix);
    record_time_line(
        "%sgraph_replay: cudaGraphLaunch %.1f us on the host; the replay %.3f ms on the GPU "
        "(graph_device_edit)",
        q->prefix, median_of(submit_us, 5), perf_ms(name));
}

// What bounds a grouped GEMM of batch 0, measured here: the MMAs' rows (64
// per warpgroup: an expert's rows rounded up to 64) at our dense kernel's
// rate, and the weights: each expert's B_g (N x K) read from memory at least
// once, at cudaMemcpy's rate (read plus write, A's buffers copied: they are no
// longer needed). The slower of the two is the bound.
static void report_bound(Problem* q) {
    const Batch* b = &q->host[BATCH_0];
    uint64_t mma_rows = 0, b_bytes = 0;
    for (uint32_t g = 0; g < q->experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        mma_rows += (m + WG_M - 1) / WG_M * WG_M;
        b_bytes += m ? (uint64_t)q->n * q->ld_ab * 2 : 0;
    }
    const size_t a_bytes = (size_t)q->total * q->ld_ab * 2;
    Timer t;
    for (t = timer_begin(q->cli, q->s, NULL, 0); timer_next(&t);)
        CUDA_CHECK(cudaMemcpyAsync(q->a[1], q->a[0], a_bytes, cudaMemcpyDeviceToDevice, q->s));
    char name[64];
    snprintf(name, sizeof name, "%sdense", q->prefix);
    const double dense_ms = perf_ms(name), rate = 2.0 * a_bytes / (t.median_ms * 1e-3);
    snprintf(name, sizeof name, "%sdense_cublas", q->prefix);
    const double ref_ms = perf_ms(name), mma_ms = dense_ms * mma_rows / q->total, b_ms = b_bytes / rate * 1e3;
    snprintf(name, sizeof name, "%sdevice_edit", q->prefix);
    const double edit_ms = perf_ms(name);
    snprintf(name, sizeof name, "%sdevice_edit_other_order", q->prefix);
    const double other_ms = perf_ms(name);
    if (dense_ms <= 0 || ref_ms <= 0 || edit_ms <= 0 || other_ms <= 0) return;  // a part failed: no bound
    const bool mixed = b->split < b->first_tile[q->experts];
    record_gpu_line(
        "%sbound: the MMAs cover %llu rows for %u (%.1f %% more), %.3f ms at dense's rate; every B_g read "
        "once is %.2f GB, %.3f ms at cudaMemcpy's %.0f GB/s; so %.1f %% of dense_cublas at most, "
        "device_edit %.1f %% (%s; %s %.1f %%)",
        q->prefix, (unsigned long long)mma_rows, q->total, 100.0 * mma_rows / q->total - 100.0, mma_ms,
        b_bytes * 1e-9, b_ms, rate * 1e-9, 100.0 * ref_ms / (mma_ms > b_ms ? mma_ms : b_ms),
        100.0 * ref_ms / edit_ms, mixed ? "the work mixed" : "in expert order",
        mixed ? "in expert order" : "mixed", 100.0 * ref_ms / other_ms);
    // Whole tiles: a tile of an expert's last tile row streams its whole slice of B_g however few of its
    // rows are real. A model, not a bound: the CTA with the most tiles, each at the dense problem's time
    // per tile (the dense kernel's time over its most tiles on one CTA).
    const uint32_t tiles = b->first_tile[q->experts], dense_tiles = q->host[DENSE].first_tile[1];
    const uint32_t grid = grid_for(q, tiles), dense_grid = grid_for(q, dense_tiles);
    const uint32_t per_cta = (tiles + grid - 1) / grid,
                   dense_per_cta = (dense_tiles + dense_grid - 1) / dense_grid;
    const double tiles_ms = dense_ms * per_cta / dense_per_cta;
    record_gpu_line(
        "%stiles: %u tiles of %d x %d, at most %u on one of %u CTAs against the dense problem's %u; "
        "at dense's time per tile %.3f ms, so %.1f %% of dense_cublas in whole tiles",
        q->prefix, tiles, BM, BN, per_cta, grid, dense_per_cta, tiles_ms, 100.0 * ref_ms / tiles_ms);
}

// ---- One problem: its batches, references and parts ---------------------------
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    cublasHandle_t h;
    uint32_t n, band, grid;
} Session;

// How a batch's rows fall: deterministic (a check of the draw, in expected_output.txt).
static void print_batch(const Problem* q, int i, const char* name) {
    const Batch* b = &q->host[i];
    uint32_t lo = 0xFFFFFFFFu, hi = 0, empty = 0, one = 0, ragged = 0, small = 0;
    for (uint32_t g = 0; g < q->experts; ++g) {
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        lo = min(lo, m), hi = max(hi, m), empty += m == 0, one += m == 1, ragged += m % BM != 0;
        small += m && m <= BM ? tiles_of(m, q->n) : 0;
    }
    printf(
        "%s%s: %u experts over %u rows (Zipf %.2f): %u to %u rows, %u with none, %u with one, %u no multiple "
        "of %d; %u tiles of %d x %d, %u of experts of one tile row: %s\n",
        q->prefix, name, q->experts, q->total, q->skew / 100.0, lo, hi, empty, one, ragged, BM,
        b->first_tile[q->experts], BM, BN, small,
        small == 0                             ? "no schedule to choose"
        : b->split < b->first_tile[q->experts] ? "mixed"
                                               : "in expert order");
}

static void part_problem(const char* prefix, uint32_t experts, uint32_t total, uint32_t k, uint32_t skew,
                         const Session* ses) {
    Problem q;
    memset(&q, 0, sizeof q);
    q.cli = ses->cli, q.prefix = prefix, q.s = ses->s, q.h = ses->h, q.band = ses->band, q.grid = ses->grid;
    q.experts = experts, q.total = total, q.n = ses->n, q.k = k, q.skew = skew;
    q.ld_ab = round_up(k, 8), q.ldc = output_ld(q.n);
    q.framed_words = (size_t)(total + 2 * FRAME) * q.ldc;
    const uint32_t seed = ses->cli->seed;
    CUDA_CHECK(cudaMalloc((void**)&q.b, (size_t)experts * q.n * q.ld_ab * 2));
    make_operand<<<1024, 256, 0, q.s>>>(q.b, (uint64_t)experts * q.n, k, q.ld_ab, seed ^ 0xB0Bu);
    for (int set = 0; set < 2; ++set) {
        CUDA_CHECK(cudaMalloc((void**)&q.a[set], (size_t)total * q.ld_ab * 2));
        make_operand<<<1024, 256, 0, q.s>>>(q.a[set], total, k, q.ld_ab, a_seed(&q, set));
        CUDA_CHECK(cudaMalloc((void**)&q.out[set], q.framed_words * 4));
        q.a_tmpl[set] = operand_map(&q, q.a[set], total, BM, "A (every expert's rows)");
        q.c_tmpl[set] = output_map(&q, c_of(&q, set), total, "C (every expert's rows)");
    }
    CHECK_LAUNCH();
    q.b_tmpl = operand_map(&q, q.b, q.n, BN, "B_0");
    q.b_all = operand_map(&q, q.b, experts * q.n, BN, "B (every expert's rows)");
    CUDA_CHECK(cudaMalloc((void**)&q.dev, sizeof(Batch)));
    CUDA_CHECK(cudaMallocHost((void**)&q.staged, sizeof(Batch)));
    CUDA_CHECK(cudaMalloc((void**)&q.maps, 3 * sizeof(CUtensorMap) * experts));
    CUDA_CHECK(cudaMemset(q.maps, 0, 3 * sizeof(CUtensorMap) * experts));
    CUDA_CHECK(cudaMallocHost((void**)&q.host_maps, 3 * sizeof(CUtensorMap) * experts));
    memset(q.host_maps, 0, 3 * sizeof(CUtensorMap) * experts);
    CUDA_CHECK(cudaMalloc((void**)&q.slots, 6 * sizeof(CUtensorMap) * q.grid));
    {  // every CTA's slots start as valid maps (the templates), whatever its first retarget does
        CUtensorMap* start = (CUtensorMap*)xmalloc(6 * sizeof(CUtensorMap) * q.grid, "the slots' first maps");
        for (uint32_t i = 0; i < 6 * q.grid; ++i)
            start[i] = i % 6 < 4 ? (i % 2 ? q.b_tmpl : q.a_tmpl[0]) : q.c_tmpl[0];
        CUDA_CHECK(cudaMemcpy(q.slots, start, 6 * sizeof(CUtensorMap) * q.grid, cudaMemcpyHostToDevice));
        free(start);
    }
    // The batches: 0 and 1 (another draw of the same law, the other buffers), the dense one.
    uint32_t rows[MAX_EXPERTS];
    for (int i = 0; i < NUM_BATCHES; ++i) {
        const int set = set_of(i);
        if (i == DENSE)
            rows[0] = total, q.experts_of[i] = 1;
        else
            expert_rows(rows, experts, total, skew / 100.0, seed + 1000u * (uint32_t)i),
                q.experts_of[i] = experts;
        fill_batch(&q.host[i], rows, q.experts_of[i], q.n, false);
        q.host[i].a = q.a[set], q.host[i].c = c_of(&q, set);
    }
    print_batch(&q, BATCH_0, "batch");
    print_batch(&q, BATCH_1, "new_batch");
    run_reference(&q, DENSE, "dense_reference_vs_cpu");
    run_reference(&q, BATCH_0, "reference_vs_cpu");
    run_reference(&q, BATCH_1, "new_batch_reference_vs_cpu");

    // 1. The reference (cuBLAS, dense: one expert of every row) and ours on it.
    use_batch(&q, DENSE);
    GROUP_PART(&q, "dense_cublas", cublas_loop(&q));
    GROUP_PART(&q, "dense", run_grouped<EDIT>(&q));

    // 2. Batch 0: one launch per expert, cuBLAS's grouped call, one grouped kernel four ways.
    use_batch(&q, BATCH_0);
    GROUP_PART(&q, "cublas_loop", cublas_loop(&q));
    const Graph loop_graph = capture(&q, cublas_loop);
    GROUP_PART(&q, "cublas_loop_graph", CUDA_CHECK(cudaGraphLaunch(loop_graph.exec, q.s)));
    encode_host_maps(&q, BATCH_0, q.host_maps);
    CUDA_CHECK(
        cudaMemcpyAsync(q.maps, q.host_maps, 3 * sizeof(CUtensorMap) * experts, cudaMemcpyHostToDevice, q.s));
    Batch* loop_batches;  // expert g alone, for ours_loop
    CUDA_CHECK(cudaMalloc((void**)&loop_batches, sizeof(Batch) * experts));
    Batch* staged_loop = (Batch*)xmalloc(sizeof(Batch) * experts, "the per-expert batches");
    for (uint32_t g = 0; g < experts; ++g) {
        const Batch* b = &q.host[BATCH_0];
        const uint32_t m = b->first_row[g + 1] - b->first_row[g];
        fill_batch(&staged_loop[g], &m, 1, q.n, false);
        staged_loop[g].a = b->a + (size_t)b->first_row[g] * q.ld_ab;
        staged_loop[g].c = b->c + (size_t)b->first_row[g] * q.ldc;
    }
    CUDA_CHECK(cudaMemcpy(loop_batches, staged_loop, sizeof(Batch) * experts, cudaMemcpyHostToDevice));
    GROUP_PART(&q, "loop_ours", ours_loop(&q, loop_batches));
    grouped_batched_part(&q);
    GROUP_PART(&q, "one_map", run_grouped<ONE_MAP>(&q));
    GROUP_PART(&q, "host_maps", run_host_maps(&q));
    GROUP_PART(&q, "device_maps", run_grouped<DEVICE_MAPS>(&q));
    GROUP_PART(&q, "device_edit", run_grouped<EDIT>(&q));
    plan_batch(&q, BATCH_0, true);  // the ablation: the same kernel, the schedule the plan did not pick
    GROUP_PART(&q, "device_edit_other_order", run_grouped<EDIT>(&q));
    plan_batch(&q, BATCH_0, false);

    // 3. Graphs captured on batch 0, replayed on batch 1 (after the same kernel launched on it).
    const Graph one_map = capture(&q, one_map_work), host_maps = capture(&q, host_maps_work);
    const Graph device_maps = capture(&q, device_maps_work), device_edit = capture(&q, device_edit_work);
    use_batch(&q, BATCH_1);
    GROUP_PART(&q, "new_batch_device_edit", run_grouped<EDIT>(&q));
    GRAPH_PART(&q, "graph_one_map", one_map, update_one_map_node(&q, &one_map));
    GRAPH_PART(&q, "graph_host_maps", host_maps, encode_host_maps(&q, BATCH_1, q.host_maps));
    GRAPH_PART(&q, "graph_device_maps", device_maps, (void)0);
    GRAPH_PART(&q, "graph_device_edit", device_edit, (void)0);
    if (timing_wanted(q.cli)) {
        report_host_costs(&q, &one_map, &device_edit);
        report_bound(&q);
    }

    const Graph graphs[] = {loop_graph, one_map, host_maps, device_maps, device_edit};
    for (const Graph& gr : graphs) {
        CUDA_CHECK(cudaGraphExecDestroy(gr.exec));
        CUDA_CHECK(cudaGraphDestroy(gr.graph));
    }
    CUDA_CHECK(cudaStreamSynchronize(q.s));
    free(staged_loop);
    CUDA_CHECK(cudaFree(loop_batches));
    CUDA_CHECK(cudaFree(q.slots));
    CUDA_CHECK(cudaFreeHost(q.host_maps));
    CUDA_CHECK(cudaFree(q.maps));
    CUDA_CHECK(cudaFreeHost(q.staged));
    CUDA_CHECK(cudaFree(q.dev));
    for (int set = 0; set < 2; ++set) {
        CUDA_CHECK(cudaFree(q.a[set]));
        CUDA_CHECK(cudaFree(q.out[set]));
    }
    CUDA_CHECK(cudaFree(q.b));
    for (int i = 0; i < NUM_BATCHES; ++i) free(q.want[i]);
}

// ---- The output: PERF lines as TFLOP/s and a fraction of the dense cuBLAS GEMM ----
// Every part does 2 sum(M_g) N K flops: the reference is cuBLAS on the dense
// problem of the same total size (dense_cublas, 100 %): what grouping costs.
static double dense_reference_ms(const MachineLine* l) {
    const bool many = !strncmp(l->text, "many_", 5);
    return perf_ms(many ? "many_dense_cublas" : "dense_cublas");
}

// ---------------------------------------------------------------------------
enum {
    OPT_EXPERTS,
    OPT_ROWS,
    OPT_K,
    OPT_SKEW,
    OPT_MANY_EXPERTS,
    OPT_MANY_ROWS,
    OPT_MANY_K,
    OPT_MANY_SKEW,
    OPT_N,
    OPT_BAND,
    OPT_CTAS,
    NUM_OPTS
};
static const IntOption kOptions[NUM_OPTS] = {
    {"--experts", "G", "experts of the first problem", 1, MAX_EXPERTS, 64, 8},
    {"--rows", "T", "rows of A (tokens) over all its experts", 1, 1 << 20, 16384, 1000},
    {"--k", "K", "its inner dimension (exact sums need K <= 2^20)", 1, MAX_K, 4096, 200},
    {"--skew", "S", "its Zipf exponent, in hundredths (100: expert i gets 1 / (i + 1) of the share)", 0, 400,
     100, 100},
    // The second problem: many small experts, a K that is no multiple of 64 under --quick.
    {"--many-experts", "G", "experts of the second problem", 1, MAX_EXPERTS, 128, 16},
    {"--many-rows", "T", "its rows over all experts", 1, 1 << 20, 8192, 700},
    {"--many-k", "K", "its inner dimension", 1, MAX_K, 7168, 72},
    {"--many-skew", "S", "its Zipf exponent, in hundredths", 0, 400, 120, 120},
    {"--n", "N", "columns of C, rows of each B_g (both problems; a multiple of 4)", 4, 32768, 4096, 264},
    {"--band", "B", "raster: bands of B tile rows within an expert (1 = row-major)", 1, 1024, 8, 8},
    // --quick: 8 CTAs, so that each goes from expert to expert with loads in flight, as at full size (the
    // sanitizers and the shadow build see the retarget and its waits).
    {"--ctas", "C", "CTAs of the persistent kernels (0: as many as run at once, one per SM)", 0, 1024, 0, 8},
};

// Host bytes: the expected outputs (3 batches) and the pinned readback.
static size_t host_bytes(uint32_t total, uint32_t n) {
    return 4 * 4 * (size_t)(total + 2 * FRAME) * output_ld(n);
}
// Device bytes: B (G N rows), two buffer sets of A and C.
static size_t device_bytes(uint32_t experts, uint32_t total, uint32_t n, uint32_t k) {
    return (size_t)experts * n * round_up(k, 8) * 2 + 2 * (size_t)total * round_up(k, 8) * 2 +
           2 * 4 * (size_t)(total + 2 * FRAME) * output_ld(n);
}

// Every rule before the GPU is touched.
static void check_problem(const char* opts, uint32_t experts, uint32_t total, uint32_t n, uint32_t k) {
    char what[128];
    snprintf(what, sizeof what, "%s: %u experts over %u rows, N %u, K %u", opts, experts, total, n, k);
    const TensorMapSpec a = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, total, k,
                                           (uint64_t)round_up(k, 8) * 2, BM, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&a, what);
    const TensorMapSpec b =
        tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (const void*)256, (uint64_t)experts * n, k,
                       (uint64_t)round_up(k, 8) * 2, BN, BK, CU_TENSOR_MAP_SWIZZLE_128B);
    require_tensor_rules(&b, what);
    if ((uint64_t)total * n >= (1ull << 32))
        die_usage("%s: C has 2^32 elements or more; rows x N must stay below", what);
    require_host_memory(what, host_bytes(total, n));
}

static void check_arguments(const Cli* cli) {
    const long long* v = cli->value;
    if (v[OPT_N] % 4)
        die_usage(
            "--n %lld is not a multiple of 4: C's rows leave through the TMA store in 16-byte chunks, and a "
            "row of C_g that ends inside one would have the chunk's rest written past it",
            v[OPT_N]);
    check_problem("--experts --rows --n --k", (uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS],
                  (uint32_t)v[OPT_N], (uint32_t)v[OPT_K]);
    check_problem("--many-experts --many-rows --n --many-k", (uint32_t)v[OPT_MANY_EXPERTS],
                  (uint32_t)v[OPT_MANY_ROWS], (uint32_t)v[OPT_N], (uint32_t)v[OPT_MANY_K]);
}

static const CliSpec kCli = {
    "10_grouped_gemm: a mixture-of-experts GEMM (C_g = A_g B_g^T, bf16 in, fp32 out) on Hopper,\n"
    "one launch per expert against one grouped kernel whose tensor maps come from the host or the device,\n"
    "plain and under CUDA graphs; every expert checked bit for bit, timed against the dense cuBLAS GEMM.",
    CLI_REPS | CLI_SEED, kOptions, NUM_OPTS, check_arguments};

static void print_problem(const Cli* cli) {
    const long long* v = cli->value;
    print_header("10_grouped_gemm", "a mixture-of-experts GEMM, where tensor maps edited on the device pay");
    printf(
        "problem: C_g = A_g B_g^T per expert, A_g M_g x K (every expert's rows back to back), B_g N x K, "
        "bf16 in, "
        "fp32 out; %lld experts over %lld rows, K %lld; many: %lld experts over %lld rows, K %lld; N %lld; "
        "tiles "
        "%d x %d x %d\n",
        v[OPT_EXPERTS], v[OPT_ROWS], v[OPT_K], v[OPT_MANY_EXPERTS], v[OPT_MANY_ROWS], v[OPT_MANY_K], v[OPT_N],
        BM, BN, BK);
}

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    const long long* v = cli.value;
    require_hopper();
    require_device_memory("--experts --rows --n --k",
                          device_bytes((uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS], (uint32_t)v[OPT_N],
                                       (uint32_t)v[OPT_K]));
    require_device_memory("--many-experts --many-rows --n --many-k",
                          device_bytes((uint32_t)v[OPT_MANY_EXPERTS], (uint32_t)v[OPT_MANY_ROWS],
                                       (uint32_t)v[OPT_N], (uint32_t)v[OPT_MANY_K]));
    print_problem(&cli);
    Session ses = {&cli, NULL, NULL, (uint32_t)v[OPT_N], (uint32_t)v[OPT_BAND], 0};
    CUDA_CHECK(cudaStreamCreateWithFlags(&ses.s, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&ses.h));
    CUBLAS_CHECK(cublasSetStream(ses.h, ses.s));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)grouped_gemm<ONE_MAP>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)grouped_gemm<HOST_MAPS>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)grouped_gemm<DEVICE_MAPS>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)grouped_gemm<EDIT>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    const uint32_t resident = (uint32_t)persistent_grid((const void*)grouped_gemm<EDIT>, THREADS, SMEM_BYTES);
    ses.grid = v[OPT_CTAS] && v[OPT_CTAS] < resident ? (uint32_t)v[OPT_CTAS] : resident;
    part_problem("", (uint32_t)v[OPT_EXPERTS], (uint32_t)v[OPT_ROWS], (uint32_t)v[OPT_K],
                 (uint32_t)v[OPT_SKEW], &ses);
    part_problem("many_", (uint32_t)v[OPT_MANY_EXPERTS], (uint32_t)v[OPT_MANY_ROWS], (uint32_t)v[OPT_MANY_K],
                 (uint32_t)v[OPT_MANY_SKEW], &ses);
    record_gpu_line(
        "grouped_gemm: %u CTAs of %d threads, %d stages of %d KiB, %d x %d tiles, band of %u tile rows",
        ses.grid, THREADS, STAGES, STAGE_BYTES >> 10, BM, BN, ses.band);
    CUBLAS_CHECK(cublasDestroy(ses.h));
    CUDA_CHECK(cudaStreamDestroy(ses.s));
    return finish_against(dense_reference_ms, "TFLOP/s", 1e12, "cublas");
}
