// tensor_map.h: building a TMA tensor map on the host, with every rule checked
// first. Taught in step 03 (its lesson goes through every argument).
//
// cuTensorMapEncodeTiled answers any broken rule with CUDA_ERROR_INVALID_VALUE
// and nothing else, so tensor_map_rule_broken() checks the rules itself and
// says which one broke and how to fix it. It is plain host C, unit-tested on
// the CPU (tests/unit_tensor_map.cu), and step 03's `rules` part checks on the
// GPU that the driver's encoder refuses exactly what it refuses.
//
// The encoder is a driver function. It is fetched at run time through the
// runtime (cudaGetDriverEntryPointByVersion, CUDA >= 12.5; older toolkits use
// cudaGetDriverEntryPoint), so the program does not link libcuda and still
// starts, and says "no CUDA device", on a machine without a GPU.
#pragma once

#include <cuda.h>          // CUtensorMap and its enums: types only, no libcuda link
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include "common/tutorial.cuh"

typedef struct {
    CUtensorMapDataType dtype;
    uint32_t rank;            // 1..5
    const void* address;      // global memory, 16-byte aligned
    uint64_t dim[5];          // elements per dimension, FASTEST first (dim[0] = columns)
    uint64_t stride[4];       // bytes between consecutive indices of dims 1..rank-1 (dim 0 is implicit)
    uint32_t box[5];          // elements per dimension of the box one copy moves, fastest first
    uint32_t elem_stride[5];  // traversal stride, 1..8: 1 = every element; dim 0's is ignored (no interleave)
    CUtensorMapSwizzle swizzle;           // shared-memory layout of the box (step 05)
    CUtensorMapFloatOOBfill oob;          // NONE: out-of-bounds elements read as zero
    CUtensorMapL2promotion l2_promotion;  // the size of the L2's requests to DRAM for this tensor
} TensorMapSpec;

static inline size_t tensor_elem_bytes(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
        return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
        return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
        return 8;
    default:
        return 4;
    }
}

static inline int tensor_is_float(CUtensorMapDataType t) {
    return t == CU_TENSOR_MAP_DATA_TYPE_FLOAT16 || t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 ||
           t == CU_TENSOR_MAP_DATA_TYPE_FLOAT64 || t == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 ||
           t == CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ || t == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 ||
           t == CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ;
}

static inline uint32_t swizzle_span_bytes(CUtensorMapSwizzle s) {
    return s == CU_TENSOR_MAP_SWIZZLE_32B    ? 32
           : s == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
           : s == CU_TENSOR_MAP_SWIZZLE_NONE ? 0
                                             : 128;
}

// NULL if the spec keeps every rule; else `msg`, naming the rule and the fix.
static inline const char* tensor_map_rule_broken(const TensorMapSpec* s, char* msg, size_t cap) {
    const size_t e = tensor_elem_bytes(s->dtype);
    if (s->rank < 1 || s->rank > 5) {
        snprintf(msg, cap, "tensor rank %u is not 1..5 (TMA handles 1 to 5 dimensions)", s->rank);
        return msg;
    }
    if ((uintptr_t)s->address % 16 != 0) {
        snprintf(msg, cap,
                 "global address %p is not 16-byte aligned, which TMA requires: start the tensor at a "
                 "multiple of 16 B (cudaMalloc returns 256-byte aligned memory)",
                 s->address);
        return msg;
    }
    for (uint32_t d = 0; d < s->rank; ++d)
        if (s->dim[d] < 1 || s->dim[d] > (1ull << 32)) {
            snprintf(msg, cap, "dimension %u has %llu elements: it must be 1..2^32", d,
                     (unsigned long long)s->dim[d]);
            return msg;
        }
    for (uint32_t d = 1; d < s->rank; ++d) {
        const uint64_t st = s->stride[d - 1];
        if (st % 16 != 0) {
            if (d == 1)
                snprintf(msg, cap,
                         "row stride %llu B is not a multiple of 16 B, which TMA requires: pad the row to "
                         "%llu elements of %zu B",
                         (unsigned long long)st, (unsigned long long)((st + 15) / 16 * 16 / e), e);
            else
                snprintf(msg, cap,
                         "stride of dimension %u, %llu B, is not a multiple of 16 B, which TMA requires", d,
                         (unsigned long long)st);
            return msg;
        }
        if (st >= (1ull << 40)) {
            snprintf(msg, cap, "stride of dimension %u, %llu B, is not below 2^40 B", d,
                     (unsigned long long)st);
            return msg;
        }
    }
    for (uint32_t d = 0; d < s->rank; ++d)
        if (s->box[d] < 1 || s->box[d] > 256) {
            snprintf(msg, cap,
                     "box dimension %u is %u elements: it must be 1..256 (load a larger tile as several "
                     "boxes)",
                     d, s->box[d]);
            return msg;
        }
    if (s->box[0] * e % 16 != 0) {
        snprintf(msg, cap,
                 "inner box dimension %u x %zu B = %zu B is not a multiple of 16 B: make it a multiple of "
                 "%zu elements",
                 s->box[0], e, s->box[0] * e, 16 / e);
        return msg;
    }
    const uint32_t span = swizzle_span_bytes(s->swizzle);
    if (span && s->box[0] * e > span) {
        snprintf(msg, cap,
                 "inner box dimension %u x %zu B = %zu B is wider than the %u B swizzle span: use at most "
                 "%zu elements, or several boxes",
                 s->box[0], e, s->box[0] * e, span, span / e);
        return msg;
    }
    for (uint32_t d = 0; d < s->rank; ++d)
        if (s->elem_stride[d] < 1 || s->elem_stride[d] > 8) {
            snprintf(msg, cap, "element stride of dimension %u is %u: it must be 1..8", d, s->elem_stride[d]);
            return msg;
        }
    if (s->oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !tensor_is_float(s->dtype)) {
        snprintf(msg, cap,
                 "NaN out-of-bounds fill needs a floating-point element type; use "
                 "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE (zeros) for integers");
        return msg;
    }
    return NULL;
}

// cp.async.bulk (1D, no tensor map) moves a multiple of 16 bytes between
// 16-byte aligned addresses. NULL if `bytes` keeps the rule, else `msg`.
static inline const char* bulk_copy_rule_broken(uint32_t bytes, char* msg, size_t cap) {
    if (bytes % 16 == 0) return NULL;
    snprintf(msg, cap, "bulk copy size %u B is not a multiple of 16 B, which cp.async.bulk requires", bytes);
    return msg;
}

// A rank-2 spec for a row-major matrix of `rows` x `cols` elements whose rows
// are `row_bytes` apart, moved in boxes of box_rows x box_cols.
static inline TensorMapSpec tensor_spec_2d(CUtensorMapDataType dtype, const void* address, uint64_t rows,
                                           uint64_t cols, uint64_t row_bytes, uint32_t box_rows,
                                           uint32_t box_cols, CUtensorMapSwizzle swizzle) {
    TensorMapSpec s;
    memset(&s, 0, sizeof s);
    s.dtype = dtype;
    s.rank = 2;
    s.address = address;
    s.dim[0] = cols;  // fastest-varying first: columns of a row-major matrix
    s.dim[1] = rows;
    s.stride[0] = row_bytes;  // dim 1 (rows) only: dim 0's stride is the element size
    s.box[0] = box_cols;
    s.box[1] = box_rows;
    s.elem_stride[0] = s.elem_stride[1] = 1;
    s.swizzle = swizzle;
    s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
    // No promotion: on the H200 a 256-byte promotion cost the TMA sums of step
    // 03 several points of DRAM bandwidth, and none, 64B and 128B tied (step
    // 03, part 9, measures all four on every run).
    s.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE;
    return s;
}

// The bytes one load of a box delivers, which is what the mbarrier must be
// armed with (expect_tx): every element of the box, the out-of-bounds ones
// included, but with a traversal stride s in a dimension only ceil(box / s)
// of its elements. Dimension 0's stride is ignored (no interleave).
static inline uint32_t tensor_box_bytes(const TensorMapSpec* s) {
    size_t bytes = tensor_elem_bytes(s->dtype) * s->box[0];
    for (uint32_t d = 1; d < s->rank; ++d) bytes *= (s->box[d] + s->elem_stride[d] - 1) / s->elem_stride[d];
    return (uint32_t)bytes;
}

// A launch of one block per box: at most 2^31 - 1 blocks in a grid.
static inline void require_grid(const char* what, uint64_t blocks, const char* items) {
    if (blocks > 0x7FFFFFFFull)
        die_usage("%s: %llu %s, one block each, but a grid holds at most 2^31 - 1 blocks", what,
                  (unsigned long long)blocks, items);
}

// The driver's encoder, fetched once through the runtime (no libcuda link).
// Call after require_hopper().
static inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder(void) {
    static PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    if (!encode) {
        void* fn = NULL;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                                    &found));
#else
        CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found));
#endif
        if (found != cudaDriverEntryPointSuccess || !fn)
            cannot_run("the CUDA driver has no cuTensorMapEncodeTiled (needs a CUDA 12.0+ driver)");
        encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    }
    return encode;
}

// The encoder's own answer for a spec, rules unchecked: CUDA_SUCCESS or, for
// any broken rule, CUDA_ERROR_INVALID_VALUE.
static inline CUresult encode_tensor_map(const TensorMapSpec* s, CUtensorMap* map) {
    cuuint64_t dims[8] = {0}, strides[8] = {0};  // room past rank 5: a bad rank is the encoder's to refuse
    cuuint32_t box[8] = {0}, estr[8] = {0};
    for (uint32_t d = 0; d < s->rank && d < 5; ++d) {
        dims[d] = s->dim[d];
        box[d] = s->box[d];
        estr[d] = s->elem_stride[d];
        if (d) strides[d - 1] = s->stride[d - 1];
    }
    const CUresult r =
        tensor_map_encoder()(map, s->dtype, s->rank, (void*)s->address, dims, strides, box, estr,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, s->swizzle, s->l2_promotion, s->oob);
    return r;
}

// Checks the rules (exit 2 naming the broken one), then encodes. `what` names
// the options or the tensor the map is for ("--rows 3000 --cols 1001").
// Exit 2 naming the input (`what`) and the rule, if `s` breaks one: the
// steps call it on their options before the GPU is touched.
static inline void require_tensor_rules(const TensorMapSpec* s, const char* what) {
    char msg[256];
    if (tensor_map_rule_broken(s, msg, sizeof msg)) die_usage("%s: %s", what, msg);
}

static inline CUtensorMap make_tensor_map(const TensorMapSpec* s, const char* what) {
    require_tensor_rules(s, what);
    CUtensorMap map;
    const CUresult r = encode_tensor_map(s, &map);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr,
                "cuTensorMapEncodeTiled failed with CUresult %d for %s although every rule checked here "
                "held\n",
                (int)r, what);
        exit(EXIT_USAGE);
    }
    return map;
}
