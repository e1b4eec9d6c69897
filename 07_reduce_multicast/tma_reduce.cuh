// tma_reduce.cuh: TMA store-reduce (shared memory reduced INTO global memory
// by the copy engine) and the per-element reductions it replaces.
// Taught in step 07 (07_reduce_multicast/README.md explains every operand).
//
// PTX ISA, "Data Movement and Conversion Instructions": cp.reduce.async.bulk.tensor
// and cp.reduce.async.bulk (sm_90, PTX ISA 8.0); "Parallel Synchronization and
// Communication Instructions": red (the vector form red.global.v4.f32: sm_90,
// PTX ISA 8.1). SASS: UTMAREDG.2D (tensor), UBLKRED.G.S (the non-tensor bulk
// form), REDG.E.ADD.F32 / REDG.E.ADD.F32x4 (per element / vector; .FTZ: an
// f32 red on global memory flushes subnormals to zero).
//
// A store-reduce is a TMA store whose write is a read-modify-write AT THE
// DESTINATION: the L2 combines each element of the box with what global
// memory holds, element by element. For both forms, the tensor one and the
// non-tensor bulk one, the PTX ISA says each element's update is atomic with
// .relaxed semantics at .gpu scope, like a red.global per element; neither
// instruction has a .sem or .scope qualifier to ask for more. There is no
// order between elements, and none between the reductions of different CTAs.
// Everything a plain TMA store needs still holds: every thread that wrote
// the source fences (fence.proxy.async) before the barrier that hands it
// over; one thread issues, commits its bulk group, and waits with .read
// before the source is rewritten or the block exits, and in full before
// anything in this grid reads the result.
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-07, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. The op is allowed for the map's element type: the host checks the
//      table (reduce_rule_broken) before any launch
//      07_reduce_multicast/bugs/1.diff
//   2. Every thread that wrote the source runs fence.proxy.async before
//      the barrier that hands it over                                    [S1]
//      07_reduce_multicast/bugs/2.diff
//   3. One thread reduces and commits; wait_group.read N before the source
//      is rewritten                                                      [S2]
//   4. wait_group.read 0 before the CTA ends                             [S3]
#pragma once

#include <cuda.h>  // CUtensorMapDataType

#include <type_traits>

#include "04_tma_store/tma_store.cuh"  // smem_u32, gmem_u64, bulk groups, fence_proxy_async_shared

// The reductions the TMA knows. Which element types each allows is a table
// (reduce_rule_broken below); the 1D form spells the type in the instruction,
// the tensor form takes it from the tensor map.
enum ReduceOp { RED_ADD, RED_MIN, RED_MAX, RED_INC, RED_DEC, RED_AND, RED_OR, RED_XOR, NUM_REDUCE_OPS };

static const char* const kReduceOpName[NUM_REDUCE_OPS] = {"add", "min", "max", "inc",
                                                          "dec", "and", "or",  "xor"};

// ---- tensor store-reduce: box in shared memory (op) global box -------------
// [%0, {%1, %2}]  the tensor map ("l") and the box's coordinates, fastest first
// [%3]            the source box in shared memory ("r", 128-byte aligned)
// .add ... .xor   the reduction (the load mode, .tile, is the default and left out)
// .bulk_group     completion is tracked in the issuing thread's bulk group
// The op is part of the opcode, so it is a template argument; the element
// type (and with it which ops are legal) comes from the map, at run time: an
// op the type does not allow is not refused by the assembler. On the H200
// .min on an f32 map traps (cudaErrorIllegalInstruction), so the host checks
// the table first (reduce_rule_broken).
#define TMA_REDUCE_2D_ASM(OP)                                            \
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP \
                 ".bulk_group"                                           \
                 " [%0, {%1, %2}], [%3];"                                \
                 :                                                       \
                 : "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(src))        \
                 : "memory")

template <ReduceOp OP>
static __device__ __forceinline__ void tma_reduce_2d(const CUtensorMap* map, int32_t c0, int32_t c1,
                                                     const void* src SHADOW_SITE) {
    SHADOW(tma_store(map, src, "a TMA reduce reads" SHADOW_PASS));
    if constexpr (OP == RED_ADD)
        TMA_REDUCE_2D_ASM("add");
    else if constexpr (OP == RED_MIN)
        TMA_REDUCE_2D_ASM("min");
    else if constexpr (OP == RED_MAX)
        TMA_REDUCE_2D_ASM("max");
    else if constexpr (OP == RED_INC)
        TMA_REDUCE_2D_ASM("inc");
    else if constexpr (OP == RED_DEC)
        TMA_REDUCE_2D_ASM("dec");
    else if constexpr (OP == RED_AND)
        TMA_REDUCE_2D_ASM("and");
    else if constexpr (OP == RED_OR)
        TMA_REDUCE_2D_ASM("or");
    else
        TMA_REDUCE_2D_ASM("xor");
}

// ---- the non-tensor bulk store-reduce: no tensor map ---------------------------
// (Not the tensor form's .1d, which takes a map: this one takes addresses.)
// [%0] global destination ("l"), [%1] shared source ("r"), %2 bytes ("r"):
// 16-byte aligned addresses, a multiple of 16 bytes. The type is in the
// opcode: .u32 for arithmetic, .b32 for the bitwise ops, .f32 for add (the
// only f32 reduction the instruction has: there is no .min.f32, and ptxas
// refuses one; tests/test_reduce_types.py shows both refusals; f64 has add,
// f16/bf16 add.noftz, min and max, which this step does not use).
#define BULK_REDUCE_ASM(OP_TYPE)                                                                  \
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." OP_TYPE " [%0], [%1], %2;" \
                 :                                                                                \
                 : "l"(gmem_u64(dst)), "r"(smem_u32(src)), "r"(bytes)                             \
                 : "memory")

template <ReduceOp OP, typename T>
static __device__ __forceinline__ void bulk_reduce(T* dst, const T* src, uint32_t bytes) {
    constexpr bool u32 = std::is_same<T, uint32_t>::value, f32 = std::is_same<T, float>::value;
    static_assert(u32 || (f32 && OP == RED_ADD),
                  "cp.reduce.async.bulk: an f32 reduces with .add only (the PTX ISA has no "
                  ".min/.max/.inc/.dec/.and/.or/.xor .f32); use uint32_t for the others");
    if constexpr (f32)
        BULK_REDUCE_ASM("add.f32");
    else if constexpr (OP == RED_ADD)
        BULK_REDUCE_ASM("add.u32");
    else if constexpr (OP == RED_MIN)
        BULK_REDUCE_ASM("min.u32");
    else if constexpr (OP == RED_MAX)
        BULK_REDUCE_ASM("max.u32");
    else if constexpr (OP == RED_INC)
        BULK_REDUCE_ASM("inc.u32");
    else if constexpr (OP == RED_DEC)
        BULK_REDUCE_ASM("dec.u32");
    else if constexpr (OP == RED_AND)
        BULK_REDUCE_ASM("and.b32");
    else if constexpr (OP == RED_OR)
        BULK_REDUCE_ASM("or.b32");
    else
        BULK_REDUCE_ASM("xor.b32");
}

// ---- what the TMA replaces: reductions issued by threads -------------------
// (The scalar one is CUDA's atomicAdd with its result unused.)
// Four floats added into 16-byte aligned global memory with ONE instruction
// (red: no value comes back, unlike atom). Relaxed, gpu scope, each element
// atomic on its own, as with atomicAdd. The vector forms are f32 add (.v2,
// .v4) and f16/bf16 add, min, max (up to .v8); there is no vector u32 red.
static __device__ __forceinline__ void red_add_v4_f32(float* dst, float a, float b, float c, float d) {
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};"
                 :
                 : "l"(gmem_u64(dst)), "f"(a), "f"(b), "f"(c), "f"(d)
                 : "memory");
}

// The load-add-store round trip of a tile's owner (step 07's method with
// no atomics): asm volatile, so that each load really goes to the L2
// (.cg: not cached in L1) and each store is issued, once per contribution.
static __device__ __forceinline__ float4 load_cg_v4_f32(const float* p) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(gmem_u64(p))
                 : "memory");
    return v;
}

static __device__ __forceinline__ void store_v4_f32(float* p, float4 v) {
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};"
                 :
                 : "l"(gmem_u64(p)), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                 : "memory");
}

// ---- the host's type table for the tensor form ------------------------------
// What the PTX ISA allows per op, by the map's element type. NULL if `op` may
// reduce elements of type `t`, else `msg` naming the rule.
static inline const char* reduce_rule_broken(ReduceOp op, CUtensorMapDataType t, char* msg, size_t cap) {
    const bool u32 = t == CU_TENSOR_MAP_DATA_TYPE_UINT32, s32 = t == CU_TENSOR_MAP_DATA_TYPE_INT32;
    const bool u64 = t == CU_TENSOR_MAP_DATA_TYPE_UINT64, s64 = t == CU_TENSOR_MAP_DATA_TYPE_INT64;
    const bool f32 = t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32, f16 = t == CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const bool bf16 = t == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    bool ok = false;
    const char* allowed = "";
    switch (op) {
    case RED_ADD:
        ok = u32 || s32 || u64 || f32 || f16 || bf16;
        allowed = "u32 s32 u64 f32 f16 bf16";
        break;
    case RED_MIN:
    case RED_MAX:
        ok = u32 || s32 || u64 || s64 || f16 || bf16;
        allowed = "u32 s32 u64 s64 f16 bf16 (no f32: on the H200 it traps at run time)";
        break;
    case RED_INC:
    case RED_DEC:
        ok = u32;
        allowed = "u32";
        break;
    default:
        ok = u32 || s32 || u64 || s64;
        allowed = "32- and 64-bit integers (.b32 .b64)";
        break;
    }
    if (ok) return NULL;
    snprintf(
        msg, cap,
        "cp.reduce.async.bulk.tensor .%s does not reduce this tensor map's element type (CUtensorMapDataType "
        "%d): .%s takes %s",
        kReduceOpName[op], (int)t, kReduceOpName[op], allowed);
    return msg;
}
