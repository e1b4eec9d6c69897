// Groundwork for step 08: how each field of a tensor map is written by tensormap.replace, found by comparing
// bytes. For every field, one thread copies a host-encoded template into shared memory, replaces the field
// with a candidate encoding of a new value, and the block writes the 128 bytes back; the host encodes the
// same map with the new value through the driver (cuTensorMapEncodeTiled) and compares the two descriptors
// byte for byte. A candidate that gives identical bytes is how the field is encoded. The output is in
// tensormap_fields_<GPU>.txt beside this file.
// It uses step 08's header, 08_descriptor_update/tensormap_edit.cuh, for every replacement it provides; the
// three private wrappers below each say why the header's does not serve.
// Re-run with this source on an NVIDIA H200 (2026-11-24): the same findings as the first recording,
// made with private copies of the wrappers; re-run with `make experiments` and build/experiments/<name>.
// Build (the steps' flags, into build/experiments/tensormap_fields), from the repository root:
//   make experiments
#include "03_tma_load/tensor_map.h"
#include "08_descriptor_update/tensormap_edit.cuh"

enum Field {
    F_ADDRESS,
    F_RANK,
    F_GLOBAL_DIM,
    F_GLOBAL_STRIDE,
    F_BOX_DIM,
    F_ELEMENT_STRIDE,
    F_ELEMTYPE,
    F_INTERLEAVE,
    F_SWIZZLE,
    F_FILL
};

// Private: the header's tmap_replace_rank writes rank - 1, an encoding this tests; this writes the candidate.
static __device__ __forceinline__ void replace_rank_raw(void* smem_map, uint32_t v) {
    asm volatile("tensormap.replace.tile.rank.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "r"(v)
                 : "memory");
}

// Private: the header's tmap_replace_stride writes bytes >> 4 before CUDA 12.5; this writes the candidate.
template <int ORD>
static __device__ __forceinline__ void replace_stride_raw(void* smem_map, uint64_t v) {
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], %1, %2;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(ORD), "l"(v)
                 : "memory");
}

// One replacement in a shared-memory copy of the map (sm_90a, PTX ISA 8.3).
// ord and the field are immediates, so each case is its own instruction.
static __device__ __forceinline__ void replace(CUtensorMap* map, int field, int ord, uint64_t v) {
    const uint32_t v32 = (uint32_t)v;
    switch (field * 4 + ord) {
    case F_ADDRESS * 4:
        tmap_replace_address(map, (const void*)(uintptr_t)v);
        break;
    case F_RANK * 4:
        replace_rank_raw(map, v32);
        break;
    case F_GLOBAL_DIM * 4 + 0:
        tmap_replace_dim<0>(map, v32);
        break;
    case F_GLOBAL_DIM * 4 + 1:
        tmap_replace_dim<1>(map, v32);
        break;
    case F_GLOBAL_DIM * 4 + 2:
        tmap_replace_dim<2>(map, v32);
        break;
    case F_GLOBAL_STRIDE * 4 + 0:
        replace_stride_raw<0>(map, v);
        break;
    case F_GLOBAL_STRIDE * 4 + 1:
        replace_stride_raw<1>(map, v);
        break;
    case F_BOX_DIM * 4 + 0:
        tmap_replace_box_dim<0>(map, v32);
        break;
    case F_BOX_DIM * 4 + 1:
        tmap_replace_box_dim<1>(map, v32);
        break;
    case F_ELEMENT_STRIDE * 4 + 1:
        tmap_replace_element_stride<1>(map, v32);
        break;
    }
}

// Private: the header has no interleave_layout wrapper (step 08 never edits that field).
template <int V>
static __device__ __forceinline__ void replace_interleave(void* smem_map) {
    asm volatile("tensormap.replace.tile.interleave_layout.shared::cta.b1024.b32 [%0], %1;"
                 :
                 : "r"(smem_u32(smem_map)), "n"(V)
                 : "memory");
}

// The enumerated fields take their value as an IMMEDIATE (ptxas: "Integer
// constant expression expected"; elemtype 0..12, interleave_layout 0..2,
// swizzle_mode 0..3, fill_mode 0..1), so each value is its own instruction.
template <int V>
static __device__ __forceinline__ void replace_enum(CUtensorMap* map, int field) {
    if (field == F_ELEMTYPE) tmap_replace_elemtype<V>(map);
    if constexpr (V <= 2)
        if (field == F_INTERLEAVE) replace_interleave<V>(map);
    if constexpr (V <= 3)
        if (field == F_SWIZZLE) tmap_replace_swizzle<V>(map);
    if constexpr (V <= 1)
        if (field == F_FILL) tmap_replace_fill<V>(map);
}

template <int V = 0>
static __device__ __forceinline__ void replace_enum_value(CUtensorMap* map, int field, int v) {
    if (v == V) replace_enum<V>(map, field);
    if constexpr (V < 12) replace_enum_value<V + 1>(map, field, v);
}

__global__ void edit(const __grid_constant__ CUtensorMap tmpl, int field, int ord, uint64_t v, uint4* out) {
    __shared__ alignas(128) CUtensorMap m;
    if (threadIdx.x < 8) ((uint4*)&m)[threadIdx.x] = ((const uint4*)&tmpl)[threadIdx.x];
    __syncwarp();
    if (threadIdx.x == 0) {
        if (field >= F_ELEMTYPE)
            replace_enum_value(&m, field, (int)v);
        else
            replace(&m, field, ord, v);
    }
    __syncwarp();
    if (threadIdx.x < 8) out[threadIdx.x] = ((const uint4*)&m)[threadIdx.x];
}

static TensorMapSpec base_spec(void* a) {
    TensorMapSpec s;
    memset(&s, 0, sizeof s);
    s.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    s.rank = 3;
    s.address = a;
    s.dim[0] = 1000, s.dim[1] = 300, s.dim[2] = 7;
    s.stride[0] = 4096, s.stride[1] = 4096 * 300;
    s.box[0] = 32, s.box[1] = 16, s.box[2] = 2;
    s.elem_stride[0] = s.elem_stride[1] = s.elem_stride[2] = 1;
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
    s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    s.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    return s;
}

// Tries each candidate encoding of one new value; prints which matched.
static void try_field(const char* what, const CUtensorMap* tmpl, const TensorMapSpec* want_spec, int field,
                      int ord, const uint64_t* cand, const char* const* cand_name, int ncand, uint4* dev) {
    CUtensorMap want;
    const CUresult r = encode_tensor_map(want_spec, &want);
    if (r != CUDA_SUCCESS) {
        printf("%-44s the host encoder refuses the new value (CUresult %d)\n", what, (int)r);
        return;
    }
    printf("%-44s", what);
    for (int c = 0; c < ncand; ++c) {
        edit<<<1, 32>>>(*tmpl, field, ord, cand[c], dev);
        CUDA_CHECK(cudaGetLastError());
        CUtensorMap got;
        CUDA_CHECK(cudaMemcpy(&got, dev, 128, cudaMemcpyDeviceToHost));
        int differ = 0;
        char at[128] = "";
        for (int b = 0; b < 128; ++b)
            if (((uint8_t*)&got)[b] != ((uint8_t*)&want)[b] && ++differ <= 8)
                snprintf(at + strlen(at), sizeof at - strlen(at), " %d", b);
        if (differ == 0)
            printf(" %s: SAME BYTES;", cand_name[c]);
        else if (differ <= 2 || ncand <= 4)
            printf(" %s: %d bytes differ (at%s);", cand_name[c], differ, at);
    }
    printf("\n");
}

int main(void) {
    require_hopper();
    void* a = NULL;
    uint4* dev = NULL;
    CUDA_CHECK(cudaMalloc(&a, 64 << 20));
    CUDA_CHECK(cudaMalloc(&dev, 128));
    TensorMapSpec s = base_spec(a);
    const CUtensorMap tmpl = make_tensor_map(&s, "the template");
    printf(
        "CUDA runtime %d; template: f32, rank 3, dims 1000 x 300 x 7, strides 4096 / 1228800 B, box 32 x 16 "
        "x 2\n",
        CUDART_VERSION);
    {
        TensorMapSpec t = s;
        t.address = (char*)a + 4096 * 5;
        const uint64_t c[] = {(uint64_t)(uintptr_t)t.address, (uint64_t)(uintptr_t)t.address >> 4};
        const char* n[] = {"address", "address >> 4"};
        try_field("global_address + 20480 B", &tmpl, &t, F_ADDRESS, 0, c, n, 2, dev);
    }
    {
        TensorMapSpec t = s;
        t.dim[0] = 777;
        const uint64_t c[] = {777, 776};
        const char* n[] = {"dim", "dim - 1"};
        try_field("global_dim ord 0: 1000 -> 777", &tmpl, &t, F_GLOBAL_DIM, 0, c, n, 2, dev);
        t = s;
        t.dim[1] = 65;
        const uint64_t c1[] = {65, 64};
        try_field("global_dim ord 1: 300 -> 65", &tmpl, &t, F_GLOBAL_DIM, 1, c1, n, 2, dev);
        t = s;
        t.dim[2] = 3;
        const uint64_t c2[] = {3, 2};
        try_field("global_dim ord 2: 7 -> 3", &tmpl, &t, F_GLOBAL_DIM, 2, c2, n, 2, dev);
    }
    {
        TensorMapSpec t = s;
        t.stride[0] = 8192;
        const uint64_t c[] = {8192, 8192 >> 4};
        const char* n[] = {"bytes", "bytes >> 4"};
        try_field("global_stride ord 0 (dim 1): 4096 -> 8192 B", &tmpl, &t, F_GLOBAL_STRIDE, 0, c, n, 2, dev);
        t = s;
        t.stride[1] = 4096 * 600;
        const uint64_t c1[] = {4096 * 600, (4096 * 600) >> 4};
        try_field("global_stride ord 1 (dim 2): -> 2457600 B", &tmpl, &t, F_GLOBAL_STRIDE, 1, c1, n, 2, dev);
    }
    {
        TensorMapSpec t = s;
        t.box[0] = 64;
        const uint64_t c[] = {64, 63};
        const char* n[] = {"box", "box - 1"};
        try_field("box_dim ord 0: 32 -> 64", &tmpl, &t, F_BOX_DIM, 0, c, n, 2, dev);
        t = s;
        t.box[1] = 8;
        const uint64_t c1[] = {8, 7};
        try_field("box_dim ord 1: 16 -> 8", &tmpl, &t, F_BOX_DIM, 1, c1, n, 2, dev);
    }
    {
        TensorMapSpec t = s;
        t.elem_stride[1] = 2;
        const uint64_t c[] = {2, 1};
        const char* n[] = {"stride", "stride - 1"};
        try_field("element_stride ord 1: 1 -> 2", &tmpl, &t, F_ELEMENT_STRIDE, 1, c, n, 2, dev);
    }
    {
        TensorMapSpec t = s;
        t.rank = 2;
        t.dim[2] = 0, t.stride[1] = 0, t.box[2] = 0, t.elem_stride[2] = 0;
        const uint64_t c[] = {2, 1};
        const char* n[] = {"rank", "rank - 1"};
        try_field("rank: 3 -> 2", &tmpl, &t, F_RANK, 0, c, n, 2, dev);
    }
    {
        const struct {
            CUtensorMapDataType t;
            const char* name;
        } types[] = {{CU_TENSOR_MAP_DATA_TYPE_UINT8, "UINT8"},
                     {CU_TENSOR_MAP_DATA_TYPE_UINT16, "UINT16"},
                     {CU_TENSOR_MAP_DATA_TYPE_UINT32, "UINT32"},
                     {CU_TENSOR_MAP_DATA_TYPE_INT32, "INT32"},
                     {CU_TENSOR_MAP_DATA_TYPE_UINT64, "UINT64"},
                     {CU_TENSOR_MAP_DATA_TYPE_INT64, "INT64"},
                     {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "FLOAT16"},
                     {CU_TENSOR_MAP_DATA_TYPE_FLOAT64, "FLOAT64"},
                     {CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, "BFLOAT16"},
                     {CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ, "FLOAT32_FTZ"},
                     {CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, "TFLOAT32"},
                     {CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ, "TFLOAT32_FTZ"}};
        uint64_t c[13];
        const char* n[13];
        static char names[13][12];
        for (int v = 0; v < 13; ++v) {
            c[v] = v;
            snprintf(names[v], sizeof names[v], "value %d", v);
            n[v] = names[v];
        }
        for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
            TensorMapSpec t = s;
            t.dtype = types[k].t;
            // keep every rule: the inner box stays a multiple of 16 bytes
            t.box[0] = 32;
            char what[64];
            snprintf(what, sizeof what, "elemtype f32 -> %s (CU enum %d)", types[k].name, (int)types[k].t);
            try_field(what, &tmpl, &t, F_ELEMTYPE, 0, c, n, 13, dev);
        }
    }
    {
        const CUtensorMapSwizzle sw[] = {CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                                         CU_TENSOR_MAP_SWIZZLE_128B};
        const char* names[] = {"32B", "64B", "128B"};
        const uint64_t c[] = {0, 1, 2, 3};
        const char* n[] = {"value 0", "value 1", "value 2", "value 3"};
        for (int k = 0; k < 3; ++k) {
            TensorMapSpec t = s;
            t.swizzle = sw[k];
            t.box[0] = 8;  // 32 B: within every span
            TensorMapSpec base = s;
            base.box[0] = 8;
            const CUtensorMap tm = make_tensor_map(&base, "the 8-wide template");
            char what[64];
            snprintf(what, sizeof what, "swizzle_mode none -> %s (CU enum %d)", names[k], (int)sw[k]);
            try_field(what, &tm, &t, F_SWIZZLE, 0, c, n, 4, dev);
        }
    }
    {
        TensorMapSpec t = s;
        t.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
        const uint64_t c[] = {0, 1};
        const char* n[] = {"value 0", "value 1"};
        try_field("fill_mode zero -> NaN (CU enum 1)", &tmpl, &t, F_FILL, 0, c, n, 2, dev);
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(dev));
    return 0;
}
