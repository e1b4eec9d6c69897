// cp_async.cuh: thin wrappers for Ampere's asynchronous global -> shared copy.
// Taught in step 02 (02_cp_async/README.md explains every operand).
//
// PTX ISA, "Data Movement and Conversion Instructions": cp.async,
// cp.async.commit_group, cp.async.wait_group / cp.async.wait_all (sm_80+,
// PTX ISA 7.0). SASS: LDGSTS.E[.64|.128][.BYPASS][.ZFILL], LDGDEPBAR, DEPBAR.LE.
//
// The contract, in one paragraph: a cp.async copies cp-size bytes from global
// to shared memory without passing through registers and WITHOUT waiting. The
// issuing thread must not read the destination, nor change the source, until
// a wait says the copy is complete. Copies are collected per thread into
// groups (commit_group closes the current group); wait_group N returns once at
// most N of this thread's most recent groups are still pending, i.e. every
// older group is complete. Waits cover only the calling thread's copies: data
// that other threads copied needs their waits AND a __syncthreads().
//
// Operand conventions, here and in every later PTX header:
//   [%0] shared destination: a 32-bit shared-window address ("r"), smem_u32;
//   [%1] global source: a 64-bit global address ("l"), gmem_u64;
//   cp-size, and N of wait_group, are immediates ("n");
//   "memory" clobber: the compiler must not move ordinary loads and stores of
//   shared memory across these instructions.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-02, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. Each thread issues its copies (cp_async_*) into shared memory that
//      no asynchronous reader still reads                                [S2]
//   2. It closes them into a group (cp_async_commit_group), one group per
//      stage, even when there is nothing left to copy (an action: a group
//      missing shows at step 3's wait, as A1)
//   3. Before it reads a stage, it waits until that stage's group is
//      complete: wait_group N leaves the newest N pending                [A1]
//      02_cp_async/bugs/1.diff
//   4. A __syncthreads() after every thread's wait, before any thread reads
//      what another thread's copies wrote                                [A2]
//      02_cp_async/bugs/2.diff
//   (Step 01's plain stores need the same barrier before another thread
//   reads them                                                           [A3]
//   01_memcpy_baseline/bugs/1.diff)
#pragma once

#include "common/tutorial.cuh"

// Shared-memory operands of async copies and barriers are 32-bit addresses in
// the shared window ("r"); global ones are 64-bit global addresses ("l"). A
// generic pointer passed where PTX expects one of these is a wrong address.
static __device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

static __device__ __forceinline__ uint64_t gmem_u64(const void* p) {
    return (uint64_t)__cvta_generic_to_global(p);
}

// .ca: cache in L1 and L2 ("cache at all levels"). cp-size 4, 8 or 16 bytes;
// both addresses aligned to cp-size. SASS: LDGSTS.E / .E.64 / .E.128.
template <int BYTES>
static __device__ __forceinline__ void cp_async_ca(void* smem_dst, const void* gmem_src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async cp-size is 4, 8 or 16");
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;"
                 :
                 : "r"(smem_u32(smem_dst)), "l"(gmem_u64(gmem_src)), "n"(BYTES)
                 : "memory");
}

// .cg: cache in L2 only, bypassing L1 ("cache global"). 16 bytes only.
// SASS: LDGSTS.E.BYPASS.128.
static __device__ __forceinline__ void cp_async_cg16(void* smem_dst, const void* gmem_src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :
                 : "r"(smem_u32(smem_dst)), "l"(gmem_u64(gmem_src))
                 : "memory");
}

// src-size form: read only src_bytes (0..16) from global and fill the rest of
// the 16 destination bytes with zeros. The tail of an array whose length is
// not a multiple of 16 bytes: nothing past src + src_bytes is read.
// src_bytes > 16 is undefined. SASS: LDGSTS.E.BYPASS.128.ZFILL.
static __device__ __forceinline__ void cp_async_cg16_zfill(void* smem_dst, const void* gmem_src,
                                                           uint32_t src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 :
                 : "r"(smem_u32(smem_dst)), "l"(gmem_u64(gmem_src)), "r"(src_bytes)
                 : "memory");
}

// ignore-src form: when `ignore` is true, read nothing and write 16 zero bytes.
// The predicate is a register operand, set here from an int with setp. Lanes
// entirely past the end of an array use it (their src may point anywhere
// valid-looking; it is never dereferenced). SASS: LDGSTS.E.BYPASS.128 with a
// guard predicate as its last operand (..., !P0).
static __device__ __forceinline__ void cp_async_cg16_ignore_src(void* smem_dst, const void* gmem_src,
                                                                int ignore) {
    asm volatile(
        "{\n"
        "  .reg .pred p;\n"
        "  setp.ne.b32 p, %2, 0;\n"
        "  cp.async.cg.shared.global [%0], [%1], 16, p;\n"
        "}\n"
        :
        : "r"(smem_u32(smem_dst)), "l"(gmem_u64(gmem_src)), "r"(ignore)
        : "memory");
}

// Close this thread's current group of copies (an empty group is legal).
// SASS: LDGDEPBAR.
static __device__ __forceinline__ void cp_async_commit_group(void) {
    asm volatile("cp.async.commit_group;" : : : "memory");
}

// Wait until at most N of this thread's most recently committed groups are
// pending: all older groups are complete and their shared data may be read
// by THIS thread. N is an immediate. SASS: DEPBAR.LE SB0, N.
//   wait_group<0>: everything committed so far is complete.
//   wait_group<2>: NOT "wait for group 2"; the newest 2 groups may still fly.
template <int N>
static __device__ __forceinline__ void cp_async_wait_group(void) {
    static_assert(N >= 0 && N <= 7, "cp.async.wait_group takes a small immediate");
    asm volatile("cp.async.wait_group %0;" : : "n"(N) : "memory");
}

// Wait for every copy this thread issued, committed or not (the compiler
// emits LDGDEPBAR then DEPBAR.LE SB0, 0x0: commit, then wait for zero pending).
static __device__ __forceinline__ void cp_async_wait_all(void) {
    asm volatile("cp.async.wait_all;" : : : "memory");
}
