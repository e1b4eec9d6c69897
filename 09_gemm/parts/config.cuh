// 09_gemm/parts/config.cuh: the knobs. The tile every kernel of steps 09 and
// 10 is built from, and Config, the warp-specialized kernel's mechanisms as
// template parameters, so that every variant is the same kernel with one
// thing changed; the configurations step 09 measures.
#pragma once
#include <stddef.h>
#include <stdint.h>

// The tile every kernel here is built from. One stage of K is BK = 64 bf16:
// 128 bytes, exactly one row of the 128B swizzle (05_swizzle), so a TMA box
// of 64 x rows lands as rows of 128-byte lines, each 16-byte chunk XORed
// with its row % 8, which is the layout the MMA's descriptor names.
#define BK 64      // K per stage (elements): one 128-byte swizzle row of bf16
#define BN 256     // columns of a tile: the N of wgmma.m64n256k16
#define WG_M 64    // rows one warpgroup computes: the M of the MMA
#define K_STEP 16  // K of one MMA: 32 bytes, so 4 MMAs per stage
#define ROW_BYTES (BK * 2)

// The knobs (Config), each a template parameter, so that every variant is
// the same kernel with one thing changed:
//   MODE         COOPERATIVE: both warpgroups on one 128 x 256 tile (rows 0-63
//                and 64-127; each stage is read by both); PINGPONG: each
//                warpgroup on its own 64 x 256 tiles, taking turns (unit 0
//                to warpgroup 0, unit 1 to warpgroup 1, ...): while one
//                stores its tile, the other computes, so the epilogue hides
//                behind the other's MMAs. The stages of a unit are read by
//                one warpgroup.
//   STAGES       the ring's depth.
//   SPECIALIZED  false: no producer warpgroup; consumer thread 0 also issues
//                the loads, each one as soon as a stage comes back (the
//                classic multistage loop). setmaxnreg then has nothing to move.
//   SETMAXNREG   the producer keeps 40 registers per thread, the consumers
//                take 232: 128 * 40 + 256 * 232 = 64512 of the SM's 65536
//                (at launch all 384 threads get 168, the most that fits).
//   CM x CN      the cluster: CM CTAs on consecutive tiles down M share B's
//                tile, CN across N share A's; each loads 1/CM of B (1/CN of
//                A) and MULTICASTS it to all of them (step 07). A stage is
//                then written by several CTAs' copies, so it may be reloaded
//                only when the consumers of EVERY CTA that receives it are
//                done: each consumer warpgroup arrives on empty[s] of every
//                CTA in the cluster (count READERS x CS), with the default
//                .release.cta semantics as CUTLASS does (cluster.cuh says why).
//   EPI          how the accumulators reach C (below, after the kernel).
// And at run time: persistent (one CTA per SM looping over units) or one CTA
// per unit; the raster order (`group` rows of cluster tiles per band); and
// split-K (`splits` pieces of K per tile, each a unit, added into C).
enum { COOPERATIVE, PINGPONG };
enum { EPI_DIRECT, EPI_TMA_STORE, EPI_TMA_REDUCE, EPI_RED_V4, EPI_ATOMIC };
#define EPI_COLS 32  // an epilogue box: 64 rows x 32 fp32 = 128-byte rows, the 128B swizzle span
#define EPI_BOX_BYTES (WG_M * EPI_COLS * 4)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define MAX_SMEM_PER_BLOCK (227 * 1024)  // sm_90's opt-in limit per block, static shared memory included

template <int MODE_, int STAGES_, bool SPECIALIZED_, bool SETMAXNREG_, int CM_, int CN_, int EPI_>
struct Config {
    static constexpr int MODE = MODE_, STAGES = STAGES_, CM = CM_, CN = CN_, CS = CM_ * CN_, EPI = EPI_;
    static constexpr bool SPECIALIZED = SPECIALIZED_, SETMAXNREG = SETMAXNREG_;
    static constexpr int BM = MODE == COOPERATIVE ? 2 * WG_M : WG_M;  // rows of a unit's tile
    static constexpr int READERS = MODE == COOPERATIVE ? 2 : 1;       // warpgroups that read a stage
    static constexpr int THREADS = (SPECIALIZED ? 128 : 0) + 2 * 128;
    static constexpr int A_BYTES = BM * ROW_BYTES, STAGE_BYTES = (BM + BN) * ROW_BYTES;
    static constexpr int A_ROWS = BM / CN, B_ROWS = BN / CM;  // the slice of A and of B this CTA loads
    static constexpr bool STAGED_EPILOGUE =
        EPI == EPI_TMA_STORE || EPI == EPI_TMA_REDUCE || EPI == EPI_ATOMIC;
    static constexpr int EPI_BYTES = STAGED_EPILOGUE ? 2 * 2 * EPI_BOX_BYTES : 0;    // 2 boxes per consumer
    static constexpr size_t SMEM = (size_t)STAGES * STAGE_BYTES + EPI_BYTES + 1024;  // + 1024: alignment
    static_assert(SMEM + 256 <= MAX_SMEM_PER_BLOCK, "the stages do not fit in shared memory");
    static_assert(SPECIALIZED || (!SETMAXNREG && MODE == COOPERATIVE),
                  "setmaxnreg and pingpong need a producer warpgroup");
    static_assert(CS <= 2 && STAGES >= 2, "clusters of 1 or 2 CTAs, 2 or more stages");
    // The same kernel with one knob changed (the ablation):
    using NoMulticast = Config<MODE_, STAGES_, SPECIALIZED_, SETMAXNREG_, 1, 1, EPI_>;
    using NoSetmaxnreg = Config<MODE_, STAGES_, SPECIALIZED_, false, CM_, CN_, EPI_>;
    using NoSpecialization = Config<MODE_, STAGES_, false, false, CM_, CN_, EPI_>;
    template <int S>
    using WithStages = Config<MODE_, S, SPECIALIZED_, SETMAXNREG_, CM_, CN_, EPI_>;
    template <int E>
    using WithEpilogue = Config<MODE_, STAGES_, SPECIALIZED_, SETMAXNREG_, CM_, CN_, E>;
};

// The configurations measured. The best one (so far: to be confirmed on the
// GPU) and the ablation's variants of it; the earlier parts' kernels.
using Best = Config<COOPERATIVE, 4, true, true, 2, 1, EPI_DIRECT>;
using Ring = Best::NoMulticast::NoSetmaxnreg;  // part 2: one CTA per tile, no register move
using RingRegs = Best::NoMulticast;            // part 2 with setmaxnreg; part 3 cooperative
using Pingpong = Config<PINGPONG, 5, true, true, 1, 1, EPI_DIRECT>;  // 40 KiB stages: 5 fit
using Multicast1x2 = Config<COOPERATIVE, 4, true, true, 1, 2, EPI_DIRECT>;
