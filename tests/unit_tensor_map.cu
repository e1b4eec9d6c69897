// Host-side unit tests of 03_tma_load/tensor_map.h's rule checker: for every
// rule of cuTensorMapEncodeTiled this tutorial relies on (the CUDA Driver API
// documents them), one spec that keeps it and one that breaks it. Prints "ok
// NAME" or "FAIL NAME: ...", and for each broken rule the message, so the test
// can check its wording. Step 03's `rules` part runs the same cases through
// the driver's encoder on a GPU.
#include "03_tma_load/tensor_map.h"

static int failures = 0;

// A valid 2D float32 spec: 1024 x 1000 matrix, 64 x 64 boxes.
static TensorMapSpec base(void) {
    return tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, 1024, 1000, 1000 * 4, 64, 64,
                          CU_TENSOR_MAP_SWIZZLE_NONE);
}

static void expect(const char* name, const TensorMapSpec* s, int should_break) {
    char msg[256];
    const char* broken = tensor_map_rule_broken(s, msg, sizeof msg);
    if (!!broken == should_break)
        printf("ok %s%s%s\n", name, broken ? ": " : "", broken ? broken : "");
    else {
        printf("FAIL %s: %s\n", name, broken ? broken : "accepted, should have been refused");
        ++failures;
    }
}

int main(void) {
    TensorMapSpec s = base();
    expect("valid_2d", &s, 0);

    s = base();
    s.rank = 0;
    expect("rank_0", &s, 1);
    s = base();
    s.rank = 6;
    expect("rank_6", &s, 1);
    s = base();
    s.rank = 1;
    expect("rank_1_valid", &s, 0);

    s = base();
    s.address = (const void*)264;
    expect("address_8_aligned", &s, 1);
    s = base();
    s.address = (const void*)272;
    expect("address_16_aligned_valid", &s, 0);

    s = base();
    s.dim[1] = 0;
    expect("dim_0", &s, 1);
    s = base();
    s.dim[1] = (1ull << 32) + 1;
    expect("dim_over_2_32", &s, 1);
    s = base();
    s.dim[1] = 1ull << 32;
    s.stride[0] = 4000;
    expect("dim_2_32_valid", &s, 0);

    s = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, (const void*)256, 1024, 1001, 1001 * 4, 64, 64,
                       CU_TENSOR_MAP_SWIZZLE_NONE);
    expect("row_stride_4004", &s, 1);
    s = base();
    s.stride[0] = 1ull << 40;
    expect("stride_2_40", &s, 1);
    s = base();
    s.stride[0] = 3984;
    s = base();
    s.stride[0] = 2000;
    expect("rows_overlap_valid", &s, 0);
    s = base();
    s.stride[0] = 4096;
    expect("stride_padded_valid", &s, 0);

    s = base();
    s.box[1] = 0;
    expect("box_0", &s, 1);
    s = base();
    s.box[1] = 257;
    expect("box_257", &s, 1);
    s = base();
    s.box[1] = 256;
    expect("box_256_valid", &s, 0);
    s = base();
    s.box[0] = 3;
    expect("inner_box_12_bytes", &s, 1);
    s = base();
    s.box[0] = 4;
    expect("inner_box_16_bytes_valid", &s, 0);

    s = base();
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    s.box[0] = 64;
    expect("swizzle_128_box_256_bytes", &s, 1);
    s = base();
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    s.box[0] = 32;
    expect("swizzle_128_box_128_bytes_valid", &s, 0);
    s = base();
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_32B;
    s.box[0] = 16;
    expect("swizzle_32_box_64_bytes", &s, 1);
    s = base();
    s.swizzle = CU_TENSOR_MAP_SWIZZLE_64B;
    s.box[0] = 16;
    expect("swizzle_64_box_64_bytes_valid", &s, 0);

    s = base();
    s.elem_stride[1] = 0;
    expect("elem_stride_0", &s, 1);
    s = base();
    s.elem_stride[1] = 9;
    expect("elem_stride_9", &s, 1);
    s = base();
    s.elem_stride[1] = 8;
    expect("elem_stride_8_valid", &s, 0);

    s = base();
    s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    expect("nan_fill_float_valid", &s, 0);
    s = base();
    s.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT32;
    s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
    expect("nan_fill_uint32", &s, 1);

    // The bytes a load delivers: the whole box, but with a traversal stride s
    // only ceil(box / s) of a dimension's elements (dimension 0's is ignored).
    s = base();
    s.box[0] = 32;
    s.box[1] = 16;
    s.elem_stride[1] = 2;
    int bytes_ok = tensor_box_bytes(&s) == 32 * 4 * 8;
    s.elem_stride[0] = 2;
    s.box[1] = 15;
    s.elem_stride[1] = 4;
    bytes_ok &= tensor_box_bytes(&s) == 32 * 4 * 4;
    printf("%s box_bytes_strided\n", bytes_ok ? "ok" : "FAIL");
    failures += !bytes_ok;

    printf("%s\n", failures ? "UNIT: FAIL" : "UNIT: PASS");
    return failures ? 1 : 0;
}
