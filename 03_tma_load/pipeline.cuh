// pipeline.cuh: the pieces of the Hopper pipeline that are not copies or
// barriers: warps with roles (one producer warp issues the TMA, consumer warps
// use the data), registers moved between them, and the scheduler that hands a
// persistent kernel's blocks their work. Taught in step 03
// (03_tma_load/README.md, "The Hopper pipeline").
//
// PTX ISA: elect.sync (sm_90, PTX ISA 8.0); setmaxnreg (sm_90a, PTX ISA 8.0).
// SASS: ELECT, USETMAXREG.
#pragma once

#include "common/tutorial.cuh"

// One lane of the (converged, full) warp gets true: the one that issues the
// warp's TMA copies. Unlike `lane == 0`, the compiler knows exactly one lane
// is chosen, and the code that follows can stay uniform (one instruction
// stream, UR registers) instead of a divergent branch.
static __device__ __forceinline__ bool elect_one_sync(void) {
    uint32_t elected;
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  elect.sync _|p, 0xffffffff;\n"
        "  selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(elected));
    return elected != 0;
}

// Move registers between the warpgroups of a block: .dec gives this
// warpgroup's registers above N back to the SM's pool, .inc waits until N per
// thread are free and takes them. Rules: all 4 warps of a warpgroup (128
// consecutive threads, starting at a multiple of 128) execute the same
// instruction; N is an immediate in 24..256, a multiple of 8; the kernel has a
// register cap at entry (__launch_bounds__(threads, 1) or -maxrregcount),
// else ptxas ignores it (warning C7508). Registers gained by .inc start
// undefined. sm_90a only (the binaries are built for it).
// (The build with the protocol checker's hooks, -DTUTORIAL_SHADOW, leaves
// registers where the launch put them: its hooks are function calls, which
// cannot live in 40 registers.)
template <int N>
static __device__ __forceinline__ void setmaxnreg_dec(void) {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
#ifndef TUTORIAL_SHADOW
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" : : "n"(N));
#endif
}

template <int N>
static __device__ __forceinline__ void setmaxnreg_inc(void) {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
#ifndef TUTORIAL_SHADOW
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" : : "n"(N));
#endif
}

// ---- which boxes a block works on -------------------------------------------
// A persistent kernel launches about one block per SM and lets each block
// loop. Which boxes a block takes decides how evenly the work ends:
//   SCHED_CHUNK    `chunk` consecutive boxes from blockIdx.x * chunk: a fixed
//                  share per block (chunk 1 with one block per box is the
//                  ordinary, non-persistent launch);
//   SCHED_STRIDED  boxes blockIdx.x, blockIdx.x + gridDim.x, ...: a fixed
//                  share, interleaved;
//   SCHED_DYNAMIC  units of `chunk` consecutive boxes taken from a global
//                  counter (reset to 0 before each launch): a block that runs
//                  ahead takes more, as the hardware's block scheduler hands
//                  out one-box blocks in order.
// One thread keeps the schedule (the producer of a warp-specialized kernel).
enum { SCHED_CHUNK, SCHED_STRIDED, SCHED_DYNAMIC };

typedef struct {
    int kind;
    uint32_t chunk, nboxes;
    unsigned int* counter;  // SCHED_DYNAMIC: the next unit to hand out
    uint32_t unit;          // SCHED_DYNAMIC: the unit being worked on...
    uint32_t upcoming;      // ...and the one after it, taken a unit ahead
} Schedule;

static __device__ __forceinline__ Schedule make_schedule(int kind, uint32_t chunk, uint32_t nboxes,
                                                         unsigned int* counter) {
    Schedule s = {kind, chunk, nboxes, counter, 0, 0};
    return s;
}

// The k-th box of this block (k = 0, 1, 2, ... in turn), or nboxes: no more.
// SCHED_DYNAMIC takes each unit from the counter one unit AHEAD of its use:
// an atomic's answer takes about a microsecond to come back, and the thread
// that asked must not stop issuing copies while it waits.
static __device__ __forceinline__ uint32_t next_box(Schedule* s, uint32_t k) {
    uint32_t box;
    if (s->kind == SCHED_CHUNK) {
        box = k < s->chunk ? blockIdx.x * s->chunk + k : s->nboxes;
    } else if (s->kind == SCHED_STRIDED) {
        box = blockIdx.x + k * gridDim.x;
    } else {
        if (k % s->chunk == 0) {
            s->unit = k ? s->upcoming : atomicAdd(s->counter, 1u);
            s->upcoming = atomicAdd(s->counter, 1u);
        }
        box = s->unit * s->chunk + k % s->chunk;
    }
    return box < s->nboxes ? box : s->nboxes;
}
