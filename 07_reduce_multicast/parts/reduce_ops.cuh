// A part of 07_reduce_multicast/reduce_multicast.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "07_reduce_multicast/tma_reduce.cuh"
#include "07_reduce_multicast/parts/problem.cuh"

// ---- Parts 1 and 2: every op, exactly, on u32 ------------------------------
// What contributor k reduces into element i with `op`, chosen so that every
// contributor shows in the result: add and xor get hashes; min and max
// hashes against a start of all ones / zero; and clears (or sets) one bit
// per contributor, a different bit for each; inc and dec count with a
// per-element bound b in 1..15 (inc: x >= b ? 0 : x + 1; dec: x == 0 or
// x > b ? b : x - 1, the same b from every contributor, so the count wraps
// at the same place whatever the order).
static __host__ __device__ __forceinline__ uint32_t op_source(ReduceOp op, uint32_t seed, uint32_t k,
                                                              uint32_t i) {
    const uint32_t h = partial_word(seed, 0xFFFFu, i);
    switch (op) {
    case RED_INC:
    case RED_DEC:
        return 1 + h % 15;
    case RED_AND:
        return ~(1u << ((k + h) % 32));
    case RED_OR:
        return 1u << ((k + h) % 32);
    default:
        return partial_word(seed, k, i);
    }
}

// The tensor form: contributor blockIdx.y writes its tile of sources and one
// thread reduces the box into the output, like a TMA store (step 04): fence
// by every writer, barrier, issue, commit, and wait with .read before the
// block exits (its shared memory is the source until the copy has read it).
#define OPS_ROWS 256
#define OPS_COLS 256
#define OPS_K 8  // contributors per tile

template <ReduceOp OP>
__global__ void __launch_bounds__(RT_THREADS)
    reduce_ops_tensor(const __grid_constant__ CUtensorMap map, uint32_t seed) {
    __shared__ alignas(128) uint32_t box[RT_ELEMS];
    const uint32_t tiles_c = OPS_COLS / RT_COLS, k = blockIdx.y;
    const uint32_t r0 = blockIdx.x / tiles_c * RT_ROWS, c0 = blockIdx.x % tiles_c * RT_COLS;
    for (uint32_t e = threadIdx.x; e < RT_ELEMS; e += RT_THREADS)
        box[e] = op_source(OP, seed, k, (r0 + e / RT_COLS) * OPS_COLS + c0 + e % RT_COLS);
    fence_proxy_async_shared();  // these generic writes before the TMA's async-proxy read
    __syncthreads();
    if (threadIdx.x == 0) {
        // LAB-BEGIN: reduce the box into this block's output tile with the op OP (tma_reduce.cuh; the coordinates are a load's)
        tma_reduce_2d<OP>(&map, (int32_t)c0, (int32_t)r0, box);  // element type: the map's (u32)
        // LAB-END
        bulk_commit_group();
        bulk_wait_group_read<0>();  // the box has been read: the block may exit
    }
}

// The 1D form: no tensor map; the output is a flat array, and contributor k
// reduces one contiguous run of RT_ELEMS words into it.
template <ReduceOp OP>
__global__ void __launch_bounds__(RT_THREADS) reduce_ops_bulk(uint32_t* out, uint32_t seed) {
    __shared__ alignas(128) uint32_t run[RT_ELEMS];
    const uint32_t first = blockIdx.x * RT_ELEMS, k = blockIdx.y;
    for (uint32_t e = threadIdx.x; e < RT_ELEMS; e += RT_THREADS) run[e] = op_source(OP, seed, k, first + e);
    fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
        bulk_reduce<OP>(out + first, run, RT_BYTES);  // the type is uint32_t's: .u32 or .b32
        bulk_commit_group();
        bulk_wait_group_read<0>();
    }
}

// ---- Parts 1 and 2 (host): the reference and the launches ------------------
// What the output holds before the contributors: hashes for add and xor;
// for min, max, and, or the identity of the op (all ones or zero), so an
// element that no contributor reached still shows; a count in 0..19 for inc
// and dec (above some bounds b, so the first step wraps there).
static uint32_t op_init(ReduceOp op, uint32_t seed, uint32_t i) {
    switch (op) {
    case RED_MIN:
    case RED_AND:
        return 0xFFFFFFFFu;
    case RED_MAX:
    case RED_OR:
        return 0;
    case RED_INC:
    case RED_DEC:
        return partial_word(seed, 0xFFFEu, i) % 20;
    default:
        return seeded_word(seed, i);
    }
}

// One reduction step as the PTX ISA defines it for .u32 / .b32.
static uint32_t apply_op(ReduceOp op, uint32_t x, uint32_t v) {
    switch (op) {
    case RED_ADD:
        return x + v;
    case RED_MIN:
        return v < x ? v : x;
    case RED_MAX:
        return v > x ? v : x;
    case RED_INC:
        return x >= v ? 0 : x + 1;
    case RED_DEC:
        return x == 0 || x > v ? v : x - 1;
    case RED_AND:
        return x & v;
    case RED_OR:
        return x | v;
    default:
        return x ^ v;
    }
}

typedef void (*OpsTensorKernel)(CUtensorMap, uint32_t);
typedef void (*OpsBulkKernel)(uint32_t*, uint32_t);
static const OpsTensorKernel kOpsTensor[NUM_REDUCE_OPS] = {
    reduce_ops_tensor<RED_ADD>, reduce_ops_tensor<RED_MIN>, reduce_ops_tensor<RED_MAX>,
    reduce_ops_tensor<RED_INC>, reduce_ops_tensor<RED_DEC>, reduce_ops_tensor<RED_AND>,
    reduce_ops_tensor<RED_OR>,  reduce_ops_tensor<RED_XOR>};
static const OpsBulkKernel kOpsBulk[NUM_REDUCE_OPS] = {
    reduce_ops_bulk<RED_ADD>, reduce_ops_bulk<RED_MIN>, reduce_ops_bulk<RED_MAX>, reduce_ops_bulk<RED_INC>,
    reduce_ops_bulk<RED_DEC>, reduce_ops_bulk<RED_AND>, reduce_ops_bulk<RED_OR>,  reduce_ops_bulk<RED_XOR>};

// What the output must hold after every contributor reduced into it with `op`
// (init: what it holds before), element by element, in contributor order:
// the ops are exact, and the order does not change the result.
static void reduce_ops_reference(ReduceOp op, uint32_t seed, uint32_t* init, uint32_t* want, size_t n) {
    for (uint32_t i = 0; i < n; ++i) {
        init[i] = want[i] = op_init(op, seed, i);
        for (uint32_t k = 0; k < OPS_K; ++k) want[i] = apply_op(op, want[i], op_source(op, seed, k, i));
    }
}

// Parts 1 and 2: every op in both forms on a 256 x 256 u32 output, OPS_K
// contributors per tile, each result compared word for word.
static void part_reduce_ops(uint32_t seed, cudaStream_t s) {
    const size_t n = (size_t)OPS_ROWS * OPS_COLS;
    uint32_t* out = NULL;
    CUDA_CHECK(cudaMalloc(&out, n * 4));
    uint32_t* init = (uint32_t*)xmalloc(n * 4, "the reduce_ops input");
    uint32_t* want = (uint32_t*)xmalloc(n * 4, "the reduce_ops reference");
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, out, OPS_ROWS, OPS_COLS,
                                              OPS_COLS * 4, RT_ROWS, RT_COLS, CU_TENSOR_MAP_SWIZZLE_NONE);
    const CUtensorMap map = make_tensor_map(&spec, "the reduce_ops output");
    const dim3 grid((unsigned)(n / RT_ELEMS), OPS_K);
    for (int form = 0; form < 2; ++form)
        for (int o = 0; o < NUM_REDUCE_OPS; ++o) {
            const ReduceOp op = (ReduceOp)o;
            char msg[256], name[32];
            if (reduce_rule_broken(op, spec.dtype, msg, sizeof msg)) die_internal("%s", msg);
            reduce_ops_reference(op, seed, init, want, n);
            CUDA_CHECK(cudaMemcpyAsync(out, init, n * 4, cudaMemcpyHostToDevice, s));
            snprintf(name, sizeof name, "%s_%s_u32", form ? "bulk" : "tensor", kReduceOpName[op]);
            if (form)
                kOpsBulk[op]<<<grid, RT_THREADS, 0, s>>>(out, seed);
            else
                kOpsTensor[op]<<<grid, RT_THREADS, 0, s>>>(map, seed);
            CHECK_LAUNCH();
            check_device(name, out, want, n, s);
        }
    free(init);
    free(want);
    CUDA_CHECK(cudaFree(out));
}
