// The host's type table for the TMA store-reduce (07_reduce_multicast/tma_reduce.cuh):
// one line per (op, element type), "allowed" or the message that refuses it.
#include "07_reduce_multicast/tma_reduce.cuh"

int main(void) {
    const struct {
        const char* name;
        CUtensorMapDataType type;
    } types[] = {{"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32},    {"s32", CU_TENSOR_MAP_DATA_TYPE_INT32},
                 {"u64", CU_TENSOR_MAP_DATA_TYPE_UINT64},    {"s64", CU_TENSOR_MAP_DATA_TYPE_INT64},
                 {"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32},   {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16},
                 {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16}, {"f64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
                 {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8}};
    for (int op = 0; op < NUM_REDUCE_OPS; ++op)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
            char msg[256];
            const char* broken = reduce_rule_broken((ReduceOp)op, types[t].type, msg, sizeof msg);
            printf("%s %s: %s\n", kReduceOpName[op], types[t].name, broken ? broken : "allowed");
        }
    printf("UNIT: PASS\n");
    return 0;
}
