// tensormap_edit.cuh: editing a tensor map on the device, and the fences that
// make the TMA see the edit. Taught in step 08 (08_descriptor_update/README.md
// explains every operand and draws the descriptor's life).
//
// PTX ISA, "Data Movement and Conversion Instructions": tensormap.replace
// (sm_90a, PTX ISA 8.3; tiled maps only: .mode is .tile); "Parallel
// Synchronization and Communication Instructions": tensormap.cp_fenceproxy and
// fence.proxy.tensormap::generic (sm_90, PTX ISA 8.3); prefetch.tensormap
// (sm_90, PTX ISA 8.0). SASS: STS.64 / STS (replace
// in shared memory), ATOMG.E.EXCH.STRONG.GPU (cp_fenceproxy), UTMACCTL.IV
// (the acquire: the TMA's cached copy of the descriptor is invalidated),
// UTMACCTL.PF (prefetch).
//
// The TMA reads a tensor map through its own proxy, the TENSORMAP proxy, and
// caches it. A thread's ordinary stores (and tensormap.replace, which is one)
// are the GENERIC proxy. An edited map reaches the TMA only through a release
// in the tensormap proxy (cp_fenceproxy, or fence.proxy.tensormap release after
// an edit in place) and an acquire by the thread that then issues the TMA
// (fence.proxy.tensormap acquire on the map's address).
//
// Protocol, in the order a kernel follows it. Each step names, in brackets,
// the rule the protocol checker (make shadow-08, common/shadow/rules.h)
// checks as the kernel runs, and the planted mistake that breaks it, if
// there is one:
//   1. Before a map is rewritten, every bulk store through it has read it
//      (wait_group.read) and every load through it has landed            [M1]
//      08_descriptor_update/bugs/3.diff, 10_grouped_gemm/bugs/1.diff
//   2. The edits reach the tensormap proxy through a release: copied from
//      shared memory with tensormap.cp_fenceproxy, or, edited in place in
//      global memory, fence.proxy.tensormap::generic.release by the
//      editing thread, at .gpu scope for another CTA's use               [M2 X1]
//      08_descriptor_update/bugs/2.diff
//   3. Each thread that issues copies through the map acquires it first
//      (fence.proxy.tensormap::generic.acquire; .sys for a map the host
//      wrote)                                                            [M3]
//      08_descriptor_update/bugs/1.diff, 10_grouped_gemm/bugs/2.diff
//   4. A flag that tells another CTA the map is ready is raised with a
//      release and read with an acquire: the checker follows shared memory
//      and the maps, not a flag in global memory; make test's fence pins do
// (CUDA's Sanitizer API sees none of the tensormap instructions, and no
// tensor copy: these wrappers hand them to the checker in the build with
// -DTUTORIAL_SHADOW, hooks.h.)
#pragma once

#include <cuda.h>

#include "03_tma_load/tma_load.cuh"  // smem_u32, gmem_u64, CUtensorMap

// ---- tensormap.replace: one field of a 128-byte map, in place ---------------
// [%0] the map: in shared memory (.shared::cta, "r") or in global memory
// (.global, "l"), 128-byte aligned. .tile: the map's mode; .b1024: the map is
// 1024 bits. `ord` (which dimension, 0 = fastest) and the enumerated values
// (element type, swizzle, fill) must be IMMEDIATES ("n"): ptxas rejects a
// register there ("Integer constant expression expected"). sm_90a only.

// The tensor's base address (16-byte aligned, like the host encoder's).
static __device__ __forceinline__ void tmap_replace_address(void* smem_map, const void* base SHADOW_SITE) {
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "l"(base)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_ADDRESS, 0u, 0u SHADOW_PASS));
}

// The extent of dimension ORD, in elements (the value itself, not minus one).
template <int ORD>
static __device__ __forceinline__ void tmap_replace_dim(void* smem_map, uint32_t elems SHADOW_SITE) {
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], %1, %2;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(ORD), "r"(elems)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_DIM, ORD, elems SHADOW_PASS));
}

// The stride of dimension ORD + 1 in bytes (ORD 0: the row stride). CUDA
// 12.5 changed what the instruction takes: the full byte count from 12.5 on,
// the count in 16-byte units before. What matters is the ptxas that assembles
// it, so the test is the compiler's version, as in CUTLASS. On the H200 with
// CUDA 13.0 the full count gives byte-identical maps to the host encoder's
// (results/experiments/tensormap_fields_NVIDIA_H200.txt).
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 5))
#define TMAP_STRIDE_IN_BYTES 1
#else
#define TMAP_STRIDE_IN_BYTES 0
#endif

template <int ORD>
static __device__ __forceinline__ void tmap_replace_stride(void* smem_map, uint64_t bytes SHADOW_SITE) {
#if TMAP_STRIDE_IN_BYTES
    const uint64_t v = bytes;
#else
    const uint64_t v = bytes >> 4;
#endif
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], %1, %2;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(ORD), "l"(v)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_STRIDE, ORD, 0u SHADOW_PASS));
}

// The box's extent in dimension ORD, in elements (1..256).
template <int ORD>
static __device__ __forceinline__ void tmap_replace_box_dim(void* smem_map, uint32_t elems SHADOW_SITE) {
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], %1, %2;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(ORD), "r"(elems)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_BOX, ORD, elems SHADOW_PASS));
}

// The traversal stride of dimension ORD (1..8).
template <int ORD>
static __device__ __forceinline__ void tmap_replace_element_stride(void* smem_map,
                                                                   uint32_t stride SHADOW_SITE) {
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%0], %1, %2;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(ORD), "r"(stride)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_ESTRIDE, ORD, stride SHADOW_PASS));
}

// The rank, ZERO-based: rank - 1.
static __device__ __forceinline__ void tmap_replace_rank(void* smem_map, uint32_t rank SHADOW_SITE) {
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "r"(rank - 1)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_RANK, 0u, rank - 1 SHADOW_PASS));
}

// The element type, as the PTX ISA numbers it, which is NOT always the
// CUtensorMapDataType value: ptx_elemtype() below converts.
template <int PTX_TYPE>
static __device__ __forceinline__ void tmap_replace_elemtype(void* smem_map SHADOW_SITE) {
    static_assert(PTX_TYPE >= 0 && PTX_TYPE <= 12, "elemtype takes 0..12");
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(PTX_TYPE)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_ELEMTYPE, 0u, (uint32_t)PTX_TYPE SHADOW_PASS));
}

// Swizzle: 0 none, 1 32B, 2 64B, 3 128B (the CUtensorMapSwizzle values).
template <int MODE>
static __device__ __forceinline__ void tmap_replace_swizzle(void* smem_map SHADOW_SITE) {
    static_assert(MODE >= 0 && MODE <= 3, "swizzle_mode takes 0..3");
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(MODE)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_SWIZZLE, 0u, (uint32_t)MODE SHADOW_PASS));
}

// Out-of-bounds fill: 0 zeros, 1 NaN (the CUtensorMapFloatOOBfill values).
template <int MODE>
static __device__ __forceinline__ void tmap_replace_fill(void* smem_map SHADOW_SITE) {
    static_assert(MODE == 0 || MODE == 1, "fill_mode takes 0 or 1");
    SHADOW(map_edit_begin(smem_map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(MODE)
                 : "memory");
    SHADOW(map_edit_end(smem_map, SH_EDIT_FILL, 0u, (uint32_t)MODE SHADOW_PASS));
}

// The same three fields edited in place in GLOBAL memory (the global path).
static __device__ __forceinline__ void tmap_replace_address_global(CUtensorMap* map,
                                                                   const void* base SHADOW_SITE) {
    SHADOW(map_edit_begin(map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;"
                 :
                 : "l"(gmem_u64(map)), "l"(base)
                 : "memory");
    SHADOW(map_edit_end(map, SH_EDIT_ADDRESS, 0u, 0u SHADOW_PASS));
}

template <int ORD>
static __device__ __forceinline__ void tmap_replace_dim_global(CUtensorMap* map, uint32_t elems SHADOW_SITE) {
    SHADOW(map_edit_begin(map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_dim.global.b1024.b32 [%0], %1, %2;"
                 :
                 : "l"(gmem_u64(map)), "n"(ORD), "r"(elems)
                 : "memory");
    SHADOW(map_edit_end(map, SH_EDIT_DIM, ORD, elems SHADOW_PASS));
}

template <int ORD>
static __device__ __forceinline__ void tmap_replace_stride_global(CUtensorMap* map,
                                                                  uint64_t bytes SHADOW_SITE) {
#if TMAP_STRIDE_IN_BYTES
    const uint64_t v = bytes;
#else
    const uint64_t v = bytes >> 4;
#endif
    SHADOW(map_edit_begin(map SHADOW_PASS));
    asm volatile("tensormap.replace.tile.global_stride.global.b1024.b64 [%0], %1, %2;"
                 :
                 : "l"(gmem_u64(map)), "n"(ORD), "l"(v)
                 : "memory");
    SHADOW(map_edit_end(map, SH_EDIT_STRIDE, ORD, 0u SHADOW_PASS));
}

// ---- publishing an edit ------------------------------------------------------
// The shared-memory path: copy the edited map to a 128-byte aligned global
// slot AND release it to the tensormap proxy, at gpu scope, in one
// instruction. .sync.aligned: the whole warp executes it, converged (one
// thread's edits must be visible to the warp first: __syncwarp()).
// [%0] the global slot ("l"), [%1] the map in shared memory ("r"), 128 bytes
// (an immediate).
static __device__ __forceinline__ void tmap_cp_fenceproxy(CUtensorMap* slot,
                                                          const void* smem_map SHADOW_SITE) {
    SHADOW(map_publish(slot, smem_map SHADOW_PASS));
    asm volatile(
        "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], "
        "128;"
        :
        : "l"(gmem_u64(slot)), "r"(smem_u32(smem_map))
        : "memory");
}

// The global path: after editing a map in place with tensormap.replace
// .global (or ordinary stores), release the edits to the tensormap proxy.
static __device__ __forceinline__ void tmap_release_gpu(SHADOW_SITE_ONLY) {
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" : : : "memory");
    SHADOW(map_release(SHADOW_PASS_ONLY));
}

// ---- using an edited map -------------------------------------------------------
// By the thread that issues the TMA, before its first copy through the map:
// acquire the map's 128 bytes in the tensormap proxy. SASS: UTMACCTL.IV, the
// TMA's cached descriptor for that address is invalidated, so the next copy
// reads the new one. Without it the TMA may keep using its cached copy.
static __device__ __forceinline__ void tmap_acquire_gpu(const CUtensorMap* map SHADOW_SITE) {
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" : : "l"(map) : "memory");
    SHADOW(map_acquire(map, 0u SHADOW_PASS));
}

// The same at system scope: for a map the HOST wrote (cudaMemcpy), whose
// writes are not made by the GPU.
static __device__ __forceinline__ void tmap_acquire_sys(const CUtensorMap* map SHADOW_SITE) {
    asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" : : "l"(map) : "memory");
    SHADOW(map_acquire(map, 1u SHADOW_PASS));
}

// Bring the map into the TMA's descriptor cache ahead of its first use.
static __device__ __forceinline__ void tmap_prefetch(const CUtensorMap* map) {
    asm volatile("prefetch.tensormap [%0];" : : "l"(map) : "memory");
}

// ---- a flag between CTAs (the cross-CTA producer and consumer) ---------------
static __device__ __forceinline__ void st_release_gpu(uint32_t* p, uint32_t v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" : : "l"(gmem_u64(p)), "r"(v) : "memory");
}

static __device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(gmem_u64(p)) : "memory");
    return v;
}

// ---- a 3D load (step 08's rank check) ------------------------------------------
static __device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                   int32_t c2, uint64_t* bar SHADOW_SITE) {
    SHADOW(tma_load(dst, map, bar, 0u SHADOW_PASS));
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];"
        :
        : "r"(smem_u32(dst)), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
        : "memory");
}

// ---- host: the element type as tensormap.replace numbers it -----------------
// The PTX ISA's "Tensormap new_val validity" table, which warns that its
// values do not correspond to CUtensorMapDataType; confirmed on the H200 by
// comparing maps byte for byte (results/experiments/tensormap_fields_NVIDIA_H200.txt):
// 0..7, 11 and 12 are the CUtensorMapDataType values; FLOAT64, BFLOAT16 and
// FLOAT32_FTZ are not.
static inline int ptx_elemtype(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
        return 9;
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
        return 10;
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
        return 8;
    default:
        return (int)t;
    }
}
