// Host-side unit tests of 03_tma_load/tensor_map.h's rule checker: for every
// rule of cuTensorMapEncodeTiled this tutorial relies on (the CUDA Driver API
// documents them), one spec that keeps it and one that breaks it. Prints "ok
// NAME" or "FAIL NAME: ...", and for each broken rule the message, so the test
// can check its wording. Step 03's `rules` part runs the same kinds of cases
// through the driver's encoder on a GPU.
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

// One case: the base spec, changed by `change` (statements on `s`), must be
// refused (1) or accepted (0).
#define CASE(name, refused, change) \
    do {                            \
        TensorMapSpec s = base();   \
        change;                     \
        expect(name, &s, refused);  \
    } while (0)

int main(void) {
    CASE("valid_2d", 0, (void)0);
    CASE("rank_0", 1, s.rank = 0);
    CASE("rank_6", 1, s.rank = 6);
    CASE("rank_1_valid", 0, s.rank = 1);
    CASE("address_8_aligned", 1, s.address = (const void*)264);
    CASE("address_16_aligned_valid", 0, s.address = (const void*)272);
    CASE("dim_0", 1, s.dim[1] = 0);
    CASE("dim_over_2_32", 1, s.dim[1] = (1ull << 32) + 1);
    CASE("dim_2_32_valid", 0, s.dim[1] = 1ull << 32);
    CASE("row_stride_4004", 1, (s.dim[0] = 1001, s.stride[0] = 1001 * 4));
    CASE("stride_2_40", 1, s.stride[0] = 1ull << 40);
    CASE("rows_overlap_valid", 0, s.stride[0] = 2000);  // no rule against it: the encoder accepts it
    CASE("stride_padded_valid", 0, s.stride[0] = 4096);
    CASE("box_0", 1, s.box[1] = 0);
    CASE("box_257", 1, s.box[1] = 257);
    CASE("box_256_valid", 0, s.box[1] = 256);
    CASE("inner_box_12_bytes", 1, s.box[0] = 3);
    CASE("inner_box_16_bytes_valid", 0, s.box[0] = 4);
    CASE("swizzle_128_box_256_bytes", 1, (s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, s.box[0] = 64));
    CASE("swizzle_128_box_128_bytes_valid", 0, (s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, s.box[0] = 32));
    CASE("swizzle_32_box_64_bytes", 1, (s.swizzle = CU_TENSOR_MAP_SWIZZLE_32B, s.box[0] = 16));
    CASE("swizzle_64_box_64_bytes_valid", 0, (s.swizzle = CU_TENSOR_MAP_SWIZZLE_64B, s.box[0] = 16));
    CASE("swizzle_128_box_32_bytes_valid", 0, (s.swizzle = CU_TENSOR_MAP_SWIZZLE_128B, s.box[0] = 8));
    CASE("elem_stride_0", 1, s.elem_stride[1] = 0);
    CASE("elem_stride_9", 1, s.elem_stride[1] = 9);
    CASE("elem_stride_8_valid", 0, s.elem_stride[1] = 8);
    CASE("nan_fill_float_valid", 0, s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
    CASE("nan_fill_uint32", 1,
         (s.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT32,
          s.oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA));

    // The bytes a load delivers: the whole box, but with a traversal stride s
    // only ceil(box / s) of a dimension's elements (dimension 0's is ignored).
    TensorMapSpec s = base();
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
