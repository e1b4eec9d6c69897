// occupancy.cuh: launch shapes, from the occupancy API. Taught in step 01
// (01_memcpy_baseline/README.md, "Grid-stride" and "Loads in flight").
//
// How many blocks of a kernel an SM holds at once depends on its threads per
// block, registers and shared memory; cudaOccupancyMaxActiveBlocksPerMultiprocessor
// answers for a given launch. Later steps use these for their persistent
// grids and one-block-per-SM launches.
#pragma once

#include "common/tutorial.cuh"

// Resident blocks per SM for a launch configuration (printed on GPU lines).
static inline int blocks_per_sm(const void* kernel, int threads, size_t smem_bytes) {
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
    return per_sm;
}

static inline int sm_count(void) {
    int dev = 0, sms = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return sms;
}

// A grid that fills the GPU exactly once: every SM gets as many resident
// blocks as fit. Grid-stride ("persistent") kernels use it.
static inline int persistent_grid(const void* kernel, int threads, size_t smem_bytes) {
    const int per_sm = blocks_per_sm(kernel, threads, smem_bytes);
    if (per_sm < 1)
        die_internal("a kernel cannot be resident with %d threads and %zu B of shared memory", threads,
                     smem_bytes);
    return sm_count() * per_sm;
}

// Dynamic shared memory that makes `kernel` fit only ONCE per SM: more than
// half of an SM's shared memory (the kernel need not use it), and at least
// `needed`. Launching one block per SM then really puts one block on every
// SM: the regime of a tiled kernel whose big tiles leave room for one block.
// Raises the kernel's dynamic-shared-memory limit (needed above 48 KiB) and
// checks the result with the occupancy API.
static inline size_t smem_for_one_block_per_sm(const void* kernel, int threads, size_t needed) {
    int dev = 0, per_sm_bytes = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    size_t bytes = (size_t)per_sm_bytes / 2 + 1024;
    if (bytes < needed) bytes = needed;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    const int per_sm = blocks_per_sm(kernel, threads, bytes);
    if (per_sm != 1) die_internal("%zu B of shared memory leaves %d blocks per SM, not 1", bytes, per_sm);
    return bytes;
}
