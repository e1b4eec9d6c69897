// 02_cp_async's own harness: the tile every kernel moves, and what the parts share.
#pragma once
#include "01_memcpy_baseline/occupancy.cuh"
#include "02_cp_async/cp_async.cuh"

#define THREADS 256            // threads per block, every kernel
#define VEC 4                  // float4 per thread per tile
#define TILE4 (VEC * THREADS)  // float4 per tile: 1024 = 16 KiB
#define MAX_DEGREE 256

// What every part shares: the seeded input (device and host) and one output.
typedef struct {
    const Cli* cli;
    cudaStream_t s;
    size_t bytes, ntiles;  // the buffers, in bytes and in 16 KiB tiles
    const float4* in;
    float4* out;           // poisoned before each check
    const uint32_t* want;  // host: the input, which a copy must reproduce
} Copy;

#define COPY_PART(c, name, ...) \
    CHECK_AND_TIME(name, (c)->cli, (c)->s, (c)->out, (c)->want, (c)->bytes / 4, 2.0 * (c)->bytes, __VA_ARGS__)
