// A part of 03_tma_load/tma_load.cu, whose main() runs the parts in order.
#pragma once
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/parts/problem.cuh"

// ---- Part 6: the rules, against the driver's encoder ---------------------------
// tensor_map_rule_broken() says which rule a spec breaks; the encoder only
// says CUDA_ERROR_INVALID_VALUE. Here both judge the same specs, each one rule
// away from a valid map, and must agree. The valid neighbours matter as much:
// overlapping rows, a box larger than the tensor, a narrow swizzled box.
typedef struct {
    const char* name;
    TensorMapSpec spec;
} RuleCase;

static void part_rules(const void* dev_base) {
    const TensorMapSpec base = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dev_base, 1024, 1000, 4000, 64,
                                              64, CU_TENSOR_MAP_SWIZZLE_NONE);
    RuleCase c[32];
    int n = 0;
#define RULE_CASE(label, ...)                                                               \
    do {                                                                                    \
        if (n == (int)(sizeof c / sizeof c[0])) die_internal("more than %d rule cases", n); \
        TensorMapSpec s_ = base;                                                            \
        __VA_ARGS__;                                                                        \
        c[n].name = label;                                                                  \
        c[n++].spec = s_;                                                                   \
    } while (0)
    RULE_CASE("valid_2d", (void)0);
    RULE_CASE("rank_0", s_.rank = 0);
    RULE_CASE("rank_6", s_.rank = 6);
    RULE_CASE("address_8_aligned", s_.address = (const char*)dev_base + 8);
    RULE_CASE("address_16_aligned", s_.address = (const char*)dev_base + 16);
    RULE_CASE("dim_0", s_.dim[1] = 0);
    RULE_CASE("dim_2^32", s_.dim[1] = 1ull << 32);
    RULE_CASE("dim_2^32+1", s_.dim[1] = (1ull << 32) + 1);
    RULE_CASE("row_stride_4004", s_.dim[0] = 1001; s_.stride[0] = 4004);
    RULE_CASE("row_stride_2^40", s_.stride[0] = 1ull << 40);
    RULE_CASE("rows_overlap_stride_2000", s_.stride[0] = 2000);
    RULE_CASE("box_0", s_.box[1] = 0);
    RULE_CASE("box_256", s_.box[1] = 256);
    RULE_CASE("box_257", s_.box[1] = 257);
    RULE_CASE("box_larger_than_tensor", s_.dim[0] = 8; s_.dim[1] = 8; s_.stride[0] = 32);
    RULE_CASE("inner_box_12_bytes", s_.box[0] = 3);
    RULE_CASE("swizzle_128B_inner_256_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B);
    RULE_CASE("swizzle_128B_inner_128_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B; s_.box[0] = 32);
    RULE_CASE("swizzle_128B_inner_32_bytes", s_.swizzle = CU_TENSOR_MAP_SWIZZLE_128B; s_.box[0] = 8);
    RULE_CASE("elem_stride_0", s_.elem_stride[1] = 0);
    RULE_CASE("elem_stride_8", s_.elem_stride[1] = 8);
    RULE_CASE("elem_stride_9", s_.elem_stride[1] = 9);
    RULE_CASE("nan_fill_float32", s_.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    RULE_CASE("nan_fill_uint32", s_.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT32;
              s_.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
#undef RULE_CASE
    size_t disagree = 0;
    for (int k = 0; k < n; ++k) {
        char msg[256];
        CUtensorMap map;
        const int host_refuses = tensor_map_rule_broken(&c[k].spec, msg, sizeof msg) != NULL;
        const int driver_refuses = encode_tensor_map(&c[k].spec, &map) != CUDA_SUCCESS;
        disagree += host_refuses != driver_refuses;
        printf("rule   %-30s host %-7s encoder %s\n", c[k].name, host_refuses ? "refuses" : "accepts",
               driver_refuses ? "refuses" : "accepts");
    }
    report_check("rules_agree_with_encoder", disagree, (size_t)n);
}
