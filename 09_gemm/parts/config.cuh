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
//   Consumers          how the two consumer warpgroups share the units.
//                      COOPERATIVE: both on one 128 x 256 tile (rows 0-63 and
//                      64-127; each stage is read by both); PINGPONG: each on
//                      its own 64 x 256 tiles, taking turns (unit 0 to
//                      warpgroup 0, unit 1 to warpgroup 1, ...): while one
//                      stores its tile, the other computes, so the epilogue
//                      hides behind the other's MMAs. The stages of a unit are
//                      read by one warpgroup.
//   Stages             the ring's depth.
//   ProducerWarpgroup  true: warpgroup 0 only loads (warp specialization);
//                      false: no producer warpgroup, consumer thread 0 also
//                      issues the loads, each one as soon as a stage comes
//                      back (the classic multistage loop). setmaxnreg then has
//                      nothing to move.
//   Setmaxnreg         the producer keeps 40 registers per thread, the
//                      consumers take 232: 128 * 40 + 256 * 232 = 64512 of the
//                      SM's 65536 (at launch all 384 threads get 168, the most
//                      that fits).
//   ClusterM x ClusterN  the cluster shape: ClusterM CTAs on consecutive tiles
//                      down M share B's tile, ClusterN across N share A's;
//                      each loads 1/ClusterM of B (1/ClusterN of A) and
//                      MULTICASTS it to all of them (step 07). A stage is then
//                      written by several CTAs' copies, so it may be reloaded
//                      only when the consumers of EVERY CTA that receives it
//                      are done: each consumer warpgroup arrives on empty[s]
//                      of every CTA in the cluster (count Readers x
//                      ClusterSize), with the default .release.cta semantics
//                      as CUTLASS does (cluster.cuh says why).
//   Epilogue           how the accumulators reach C (epilogue.cuh).
// And at run time: persistent (one CTA per SM looping over units) or one CTA
// per unit; the raster order (`band` rows of cluster tiles per band,
// schedule.cuh); and split-K (`splits` pieces of K per tile, each a unit,
// added into C).
enum { COOPERATIVE, PINGPONG };
enum { EPI_DIRECT, EPI_TMA_STORE, EPI_TMA_REDUCE, EPI_RED_V4, EPI_ATOMIC };
#define EPI_COLS 32  // an epilogue box: 64 rows x 32 fp32 = 128-byte rows, the 128B swizzle span
#define EPI_BOX_BYTES (WG_M * EPI_COLS * 4)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define MAX_SMEM_PER_BLOCK (227 * 1024)  // sm_90's opt-in limit per block, static shared memory included

template <int Consumers_, int Stages_, bool ProducerWarpgroup_, bool Setmaxnreg_, int ClusterM_,
          int ClusterN_, int Epilogue_>
struct Config {
    static constexpr int Consumers = Consumers_, Stages = Stages_, Epilogue = Epilogue_;
    static constexpr int ClusterM = ClusterM_, ClusterN = ClusterN_, ClusterSize = ClusterM_ * ClusterN_;
    static constexpr bool ProducerWarpgroup = ProducerWarpgroup_, Setmaxnreg = Setmaxnreg_;
    static constexpr int BM = Consumers == COOPERATIVE ? 2 * WG_M : WG_M;  // rows of a unit's tile
    static constexpr int Readers = Consumers == COOPERATIVE ? 2 : 1;       // warpgroups that read a stage
    static constexpr int Threads = (ProducerWarpgroup ? 128 : 0) + 2 * 128;
    static constexpr int StageBytesA = BM * ROW_BYTES, StageBytes = (BM + BN) * ROW_BYTES;
    // The slice of A and of B this CTA loads (and multicasts to its cluster).
    static constexpr int SliceRowsA = BM / ClusterN, SliceRowsB = BN / ClusterM;
    // The epilogue goes through boxes in shared memory (two per consumer warpgroup).
    static constexpr bool EpilogueBoxes =
        Epilogue == EPI_TMA_STORE || Epilogue == EPI_TMA_REDUCE || Epilogue == EPI_ATOMIC;
    static constexpr int EpilogueBytes = EpilogueBoxes ? 2 * 2 * EPI_BOX_BYTES : 0;
    static constexpr size_t SmemBytes =
        (size_t)Stages * StageBytes + EpilogueBytes + 1024;  // + 1024: alignment
    static_assert(SmemBytes + 256 <= MAX_SMEM_PER_BLOCK, "the stages do not fit in shared memory");
    static_assert(ProducerWarpgroup || (!Setmaxnreg && Consumers == COOPERATIVE),
                  "setmaxnreg and pingpong need a producer warpgroup");
    static_assert(ClusterSize <= 2 && Stages >= 2, "clusters of 1 or 2 CTAs, 2 or more stages");
    // The same kernel with one knob changed (the ablation):
    using NoMulticast = Config<Consumers_, Stages_, ProducerWarpgroup_, Setmaxnreg_, 1, 1, Epilogue_>;
    using NoSetmaxnreg =
        Config<Consumers_, Stages_, ProducerWarpgroup_, false, ClusterM_, ClusterN_, Epilogue_>;
    using NoSpecialization = Config<Consumers_, Stages_, false, false, ClusterM_, ClusterN_, Epilogue_>;
    template <int S>
    using WithStages =
        Config<Consumers_, S, ProducerWarpgroup_, Setmaxnreg_, ClusterM_, ClusterN_, Epilogue_>;
    template <int E>
    using WithEpilogue =
        Config<Consumers_, Stages_, ProducerWarpgroup_, Setmaxnreg_, ClusterM_, ClusterN_, E>;
};

// The configurations measured. The best one (so far: to be confirmed on the
// GPU) and the ablation's variants of it; the earlier parts' kernels.
using Best = Config<COOPERATIVE, 4, true, true, 2, 1, EPI_DIRECT>;
using Ring = Best::NoMulticast::NoSetmaxnreg;  // part 2: one CTA per tile, no register move
using RingRegs = Best::NoMulticast;            // part 2 with setmaxnreg; part 3 cooperative
using Pingpong = Config<PINGPONG, 5, true, true, 1, 1, EPI_DIRECT>;  // 40 KiB stages: 5 fit
using Multicast1x2 = Config<COOPERATIVE, 4, true, true, 1, 2, EPI_DIRECT>;
