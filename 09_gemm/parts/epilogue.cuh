// 09_gemm/parts/epilogue.cuh: the ways a consumer warpgroup's 128
// accumulators per thread reach C: stores from registers, the TMA store or
// store-reduce through shared memory, red.global.add.v4.f32, atomicAdd.
#pragma once
#include "03_tma_load/pipeline.cuh"
#include "04_tma_store/tma_store.cuh"
#include "06_transpose/named_barrier.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"
#include "03_tma_load/tensor_map.h"
#include "09_gemm/parts/config.cuh"

// C as an epilogue writes it (`Out`): its first element c, its rows m, its
// columns n and the floats from one row to the next, ldc, for stores from
// registers; for the TMA, its tensor map c_map. 09's is the whole of C (the
// kernel's GemmArgs and C's map); step 10's an expert's rows, one unit at a
// time (its Output).
typedef struct {
    float* c;
    uint32_t m, n, ldc;
} Output;

// ---- The epilogue every kernel shares: registers to C -------------------------
// Thread t of a warpgroup holds 128 accumulators of a 64 x 256 tile whose
// top-left element is C[row0][col0] (wgmma.cuh gives the fragment): for each
// 8-column block i, two adjacent columns in row 16 w + l / 4 and the same two
// in the row 8 below. One 8-byte store per pair: the 4 lanes of a row write
// 32 contiguous bytes, a whole sector. A tile wholly inside C is stored
// without a test; an edge tile writes only what lies inside.
static __device__ __forceinline__ void store_tile(const float (&d)[128], float* c, uint32_t m, uint32_t n,
                                                  uint32_t ldc, uint32_t row0, uint32_t col0) {
    const uint32_t t = threadIdx.x % 128, r = row0 + 16 * (t / 32) + t % 32 / 4, c0 = col0 + 2 * (t % 4);
    if (row0 + WG_M <= m && col0 + BN <= n) {
        float* p = c + (size_t)r * ldc + c0;
#pragma unroll
        for (uint32_t i = 0; i < BN / 8; ++i) {
            *(float2*)(p + 8 * i) = make_float2(d[4 * i], d[4 * i + 1]);
            *(float2*)(p + 8 * (size_t)ldc + 8 * i) = make_float2(d[4 * i + 2], d[4 * i + 3]);
        }
        return;
    }
#pragma unroll
    for (uint32_t h = 0; h < 2; ++h) {
        if (r + 8 * h >= m) continue;
        float* p = c + (size_t)(r + 8 * h) * ldc;
#pragma unroll
        for (uint32_t i = 0; i < BN / 8; ++i) {
            const uint32_t col = c0 + 8 * i;
            if (col + 1 < n)
                *(float2*)(p + col) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            else if (col < n)
                p[col] = d[4 * i + 2 * h];
        }
    }
}

// bar.sync of one consumer warpgroup (ids 1 and 2; 0 is __syncthreads()).
static __device__ __forceinline__ void warpgroup_barrier(uint32_t wg) {
    if (wg == 0)
        named_barrier_sync<1, 128>();
    else
        named_barrier_sync<2, 128>();
}

// ---- The epilogues: how 128 accumulators per thread reach C ----------------
// EPI_DIRECT     store_tile: 8-byte stores from registers (above).
// EPI_TMA_STORE  through shared memory: the warpgroup writes 32 columns at a
//                time into a 64 x 32 fp32 box (128-byte rows, 128B-swizzled:
//                a warp's 8-byte stores hit 8 rows x 32 bytes, all 32 banks
//                twice, no conflict), fences, and one thread stores the box
//                with the TMA (step 04), which clips it at C's edges. Two
//                boxes per warpgroup, taken in turns by a count that runs on
//                across tiles (an edge tile may have an odd number of
//                chunks): the store of one overlaps the filling of the other,
//                and wait_group.read 1 says the older store is done reading.
// EPI_TMA_REDUCE the same with cp.reduce.async.bulk.tensor .add (step 07):
//                the L2 adds the box into C, for split-K.
// EPI_RED_V4     red.global.add.v4.f32 from registers: a shuffle between
//                lanes 2j and 2j+1 gives each lane 4 consecutive columns of
//                one row (the even lane row r, the odd lane row r + 8).
// EPI_ATOMIC     through the same box, then atomicAdd by rows: a warp adds
//                32 consecutive floats per instruction (coalesced).
template <int Epilogue, class Out>
static __device__ __forceinline__ void staged_epilogue(const float (&d)[128], const Out& out,
                                                       const CUtensorMap* c_map, float* boxes, uint32_t row0,
                                                       uint32_t col0, uint32_t tid, uint32_t wg,
                                                       uint32_t& chunks) {
    if (row0 >= out.m)
        return;  // rows all past C's (a cluster's padding tile): the whole warpgroup skips them
    const uint32_t warp = tid / 32, lane = tid % 32, r = 16 * warp + lane / 4, q = lane % 4;
#pragma unroll
    for (uint32_t ch = 0; ch < BN / EPI_COLS; ++ch) {
        if (col0 + ch * EPI_COLS >= out.n) break;                 // the same for the whole warpgroup
        float* box = boxes + chunks++ % 2 * (EPI_BOX_BYTES / 4);  // [64][32] fp32, 128B-swizzled
        if (Epilogue != EPI_ATOMIC) {
            if (tid == 0) bulk_wait_group_read<1>();  // the store that last read this box is done reading
            warpgroup_barrier(wg);
        }
#pragma unroll
        for (uint32_t j = 0; j < EPI_COLS / 8; ++j) {
            const uint32_t i = ch * (EPI_COLS / 8) + j;  // the accumulators' 8-column block
#pragma unroll
            for (uint32_t h = 0; h < 2; ++h) {
                const uint32_t row = r + 8 * h, offset = row * 128 + (8 * j + 2 * q) * 4;
                *(float2*)((uint8_t*)box + (offset ^ (row % 8) << 4)) =
                    make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
            }
        }
        if (Epilogue != EPI_ATOMIC) {
            fence_proxy_async_shared();  // every writer, before the barrier
        }
        warpgroup_barrier(wg);
        if (Epilogue == EPI_ATOMIC) {
            const uint32_t col = col0 + ch * EPI_COLS + lane;
#pragma unroll 4
            for (uint32_t k = 0; k < 16; ++k) {
                const uint32_t row = 16 * warp + k;
                const float v =
                    *(const float*)((const uint8_t*)box + ((row * 128 + lane * 4) ^ (row % 8) << 4));
                if (row0 + row < out.m && col < out.n)
                    atomicAdd(&out.c[(size_t)(row0 + row) * out.ldc + col], v);
            }
        } else if (tid == 0) {
            if (Epilogue == EPI_TMA_STORE)
                tma_store_2d(c_map, (int32_t)(col0 + ch * EPI_COLS), (int32_t)row0, box);
            else
                tma_reduce_2d<RED_ADD>(c_map, (int32_t)(col0 + ch * EPI_COLS), (int32_t)row0, box);
            bulk_commit_group();
        }
    }
}

template <class Out>
static __device__ __forceinline__ void red_tile(const float (&d)[128], const Out& out, uint32_t row0,
                                                uint32_t col0, uint32_t tid) {
    const uint32_t lane = tid % 32, q = lane % 4, odd = q & 1;
    const uint32_t row = row0 + 16 * (tid / 32) + lane / 4 + 8 * odd;
#pragma unroll
    for (uint32_t i = 0; i < BN / 8; ++i) {
        // The even lane gives away its row-(r + 8) pair, the odd lane its row-r pair.
        const float o0 = __shfl_xor_sync(0xFFFFFFFFu, odd ? d[4 * i] : d[4 * i + 2], 1);
        const float o1 = __shfl_xor_sync(0xFFFFFFFFu, odd ? d[4 * i + 1] : d[4 * i + 3], 1);
        const float v0 = odd ? o0 : d[4 * i], v1 = odd ? o1 : d[4 * i + 1];
        const float v2 = odd ? d[4 * i + 2] : o0, v3 = odd ? d[4 * i + 3] : o1;
        const uint32_t col = col0 + 8 * i + 2 * (q & 2);  // 4 columns from a multiple of 4: 16-byte aligned
        if (row >= out.m) continue;
        float* p = out.c + (size_t)row * out.ldc + col;
        if (col + 3 < out.n) {
            red_add_v4_f32(p, v0, v1, v2, v3);
        } else {
            const float v[4] = {v0, v1, v2, v3};
#pragma unroll
            for (uint32_t e = 0; e < 4; ++e)
                if (col + e < out.n) atomicAdd(p + e, v[e]);
        }
    }
}

template <class Cfg, class Out>
static __device__ __forceinline__ void epilogue(const float (&d)[128], const Out& out,
                                                const CUtensorMap* c_map, float* boxes, uint32_t row0,
                                                uint32_t col0, uint32_t tid, uint32_t wg, uint32_t& chunks) {
    if constexpr (Cfg::Epilogue == EPI_DIRECT)
        store_tile(d, out.c, out.m, out.n, out.ldc, row0, col0);
    else if constexpr (Cfg::Epilogue == EPI_RED_V4)
        red_tile(d, out, row0, col0, tid);
    else
        staged_epilogue<Cfg::Epilogue>(d, out, c_map, boxes, row0, col0, tid, wg, chunks);
}
