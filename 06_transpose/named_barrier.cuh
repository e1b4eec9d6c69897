// named_barrier.cuh: a barrier for some of a block's warps. Taught in step 06
// (06_transpose/README.md, "The pipelined transpose").
//
// PTX ISA, "Parallel Synchronization and Communication Instructions: bar,
// barrier": `bar.sync a, b` waits until b threads (a multiple of 32, counted
// per warp) have arrived at barrier a (0..15). __syncthreads() is barrier 0
// for every thread of the block; a warp-specialized kernel cannot use it
// once its producer warp has gone its own way, so the consumer warps meet at
// a barrier of their own. Like __syncthreads() it also orders the
// participating threads' shared-memory accesses.
// SASS: BAR.SYNC.DEFER_BLOCKING with the barrier and the thread count.
#pragma once

#include "common/tutorial.cuh"

template <int ID, int THREADS>
static __device__ __forceinline__ void named_barrier_sync(void) {
    static_assert(ID >= 1 && ID <= 15, "barrier 0 is __syncthreads(): use 1..15");
    static_assert(THREADS % 32 == 0, "a named barrier counts whole warps");
    asm volatile("bar.sync %0, %1;" : : "n"(ID), "n"(THREADS) : "memory");
}

// bar.arrive: count this warp in at barrier ID and go on without waiting. The
// other THREADS - (these) threads wait there with bar.sync: a one-way signal
// between warp groups (step 09's ping-pong consumers hand the tensor cores
// over with it). SASS: BAR.ARV. (The protocol checker's tool sees every
// bar.sync, not bar.arrive: its hook, in the build with -DTUTORIAL_SHADOW,
// says which threads this arrive orders ahead; common/shadow/hooks.h.)
template <int ID, int THREADS>
static __device__ __forceinline__ void named_barrier_arrive(SHADOW_SITE_ONLY) {
    static_assert(ID >= 1 && ID <= 15, "barrier 0 is __syncthreads(): use 1..15");
    static_assert(THREADS % 32 == 0, "a named barrier counts whole warps");
    SHADOW(bar_arrive(ID, THREADS SHADOW_PASS));
    asm volatile("bar.arrive %0, %1;" : : "n"(ID), "n"(THREADS) : "memory");
}
