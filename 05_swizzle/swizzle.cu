// 05_swizzle: the TMA swizzle formula, proven on hardware; bank conflicts.
//
// What it teaches
//   With a swizzle mode, the TMA does not lay a box out densely: it XORs each
//   16-byte chunk's index with the 128-byte line's index (common/swizzle.h).
//   This program proves that formula on the GPU and shows what it is for:
//     1. layout_*   for every mode (NONE, 32B, 64B, 128B) and element size
//                   (1, 2, 4, 8 B), a position-coded box is loaded and EVERY
//                   element is found where swizzle.h says; the chunk maps of
//                   the first rows are printed from the GPU's data
//     2. rule       an inner box wider than the swizzle span is refused
//     3. offset_*   128B boxes loaded at 128, 256, 512 B past a 1024-aligned
//                   base: the absolute-address formula still holds, the
//                   buffer-relative one does not
//     4. bank_*     a warp reading a 32 x 32 float tile by row, by column,
//                   by column of a padded tile and by column of a 128B-
//                   swizzled tile: the bank model's conflict degree and the
//                   measured cycles per access
//   --dump FILE writes every recorded layout and measurement as JSON
//   (05_swizzle/layouts_h200.json; the notebooks and tests read it).
//
// New since step 04: common/swizzle.h (swizzle_address, swizzle_element).
// Run: make run-05, make check-05, make profile-05 (ncu bank-conflict counters).
#include "mbarrier.cuh"
#include "swizzle.h"
#include "tensor_map.h"
#include "tma.cuh"

#define THREADS 128
#define BOX_ROWS 16        // 16 rows of the span: two periods of every mode
#define ROW_BYTES_NONE 128 // the unswizzled case uses 128-byte rows too
#define BANK_REPS 64       // repetitions of the 32-column sweep when timing a pattern

// ---------------------------------------------------------------------------
// CPU reference: the formula (common/swizzle.h) and the bank model
// ---------------------------------------------------------------------------
// Shared memory has 32 banks of 4 bytes: the word at byte address a is in bank
// (a / 4) % 32. A warp's access takes as many passes as the most distinct
// words any one bank must deliver (the same word to several threads is a
// broadcast and costs nothing extra). That maximum is the conflict degree.
static int conflict_degree(const uint32_t* byte_addr, int n) {
    int worst = 1;
    for (int b = 0; b < 32; ++b) {
        uint32_t words[32];
        int distinct = 0;
        for (int t = 0; t < n; ++t) {
            const uint32_t w = byte_addr[t] / 4;
            if (w % 32 != (uint32_t)b) continue;
            int seen = 0;
            for (int k = 0; k < distinct; ++k) seen |= words[k] == w;
            if (!seen) words[distinct++] = w;
        }
        if (distinct > worst) worst = distinct;
    }
    return worst;
}

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
// Load one box at a 1024-aligned base + offset (poisoned first), copy its bytes out raw and
// report the absolute shared address it was loaded at.
__global__ void __launch_bounds__(THREADS) raw_load(const __grid_constant__ CUtensorMap map, uint32_t offset,
                                                    uint32_t box_bytes, uint8_t* out, uint32_t* abs_addr) {
    uint8_t* dst = tma_smem_base<1024>() + offset;
    __shared__ __align__(8) uint64_t bar;
    for (uint32_t i = threadIdx.x; i < box_bytes; i += blockDim.x) dst[i] = POISON_BYTE;
    fence_proxy_async_shared();
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, box_bytes);
        tma_load_2d(dst, &map, 0, 0, &bar);
    }
    mbar_wait(&bar, 0, "raw_load's barrier", box_bytes);
    for (uint32_t i = threadIdx.x; i < box_bytes; i += blockDim.x) out[i] = dst[i];
    if (threadIdx.x == 0) *abs_addr = smem_u32(dst);
}

// ---- Part 4: one warp, four access patterns on a 32 x 32 float tile --------
// pattern 0: row      thread t reads tile[r][t]
// pattern 1: column   thread t reads tile[t][c]            (unswizzled, stride 128 B)
// pattern 2: padded   thread t reads pad[t][c], rows of 33 floats
// pattern 3: swizzled thread t reads element (t, c) of the 128B-swizzled tile,
//                     at swizzle_element(): the index a kernel must use
// One launch per pattern (so ncu's counters, make profile-05, are per
// pattern). It sweeps all 32 rows/columns BANK_REPS times; the values are
// summed (and stored) so nothing is optimized away, and the sum of pattern 3
// is also checked: a wrong swizzle index would read the wrong elements.
__global__ void __launch_bounds__(32) bank_patterns(const __grid_constant__ CUtensorMap map128, const float* tile_in,
                                                    int p, float* sums, long long* cycles) {
    uint8_t* base = tma_smem_base<1024>();
    float* plain = (float*)base;             // [32][32], dense
    float* pad = (float*)(base + 4096);      // [32][33], one float of padding per row: 4224 B
    float* swz = (float*)(base + 9216);      // [32][32], as the TMA lays it out with 128B swizzle (1024-aligned,
                                             // past the padded tile's end at 8320; at 8192 the TMA overwrote it)
    __shared__ __align__(8) uint64_t bar;
    const uint32_t t = threadIdx.x;
    for (int r = 0; r < 32; ++r) {
        plain[r * 32 + t] = tile_in[r * 32 + t];
        pad[r * 33 + t] = tile_in[r * 32 + t];
    }
    mbar_init_cta(&bar, 1, 1);  // also orders the tile stores above for the whole (one-warp) block
    if (t == 0) {
        mbar_arrive_expect_tx(&bar, 4096);
        tma_load_2d(swz, &map128, 0, 0, &bar);
    }
    mbar_wait(&bar, 0, "bank_patterns' barrier", 4096);
    const uint32_t swz_base = smem_u32(swz);
    float acc = 0.f;
    __syncwarp();
    const long long start = clock64();
    for (int rep = 0; rep < BANK_REPS; ++rep)
#pragma unroll 8
        for (int k = 0; k < 32; ++k) {
            float v;
            if (p == 0) v = plain[k * 32 + t];
            else if (p == 1) v = plain[t * 32 + k];
            else if (p == 2) v = pad[t * 33 + k];
            else v = swz[swizzle_element(swz_base, SWIZZLE_MODE_128B, t, k, 4, 128)];
            acc += v;
        }
    __syncwarp();
    const long long stop = clock64();
    sums[p * 32 + t] = acc;
    if (t == 0) cycles[p] = stop - start;
}

// ---------------------------------------------------------------------------
// Host
// ---------------------------------------------------------------------------
static const char* const mode_name[4] = {"none", "32B", "64B", "128B"};
static const CUtensorMapSwizzle mode_enum[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                                CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};

static CUtensorMapDataType dtype_for(uint32_t esize) {
    return esize == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
         : esize == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
         : esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32 : CU_TENSOR_MAP_DATA_TYPE_UINT64;
}

// One recorded layout: for every physical element of the box, the logical
// element index found there (what the GPU did, independent of any formula).
typedef struct {
    int mode;
    uint32_t esize, offset, rows, cols, abs_base;
    uint32_t* logical_at;  // [rows * cols]
} Layout;

// Loads a rows x cols box of esize-byte elements at `offset` with `mode`.
// Element (r, c) holds its own index r * cols + c; 1-byte elements cannot
// hold it, so they are loaded twice (low byte, then high byte) and combined.
static Layout record_layout(int mode, uint32_t esize, uint32_t offset, uint32_t rows, uint32_t cols, cudaStream_t s) {
    Layout L = {mode, esize, offset, rows, cols, 0, (uint32_t*)calloc(rows * cols, sizeof(uint32_t))};
    const uint32_t n = rows * cols, box_bytes = n * esize;
    uint8_t *h = (uint8_t*)calloc(box_bytes, 1), *d_tensor = NULL, *d_out = NULL, *raw = (uint8_t*)malloc(box_bytes);
    uint32_t* d_abs = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_tensor, box_bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_out, box_bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_abs, sizeof(uint32_t)));
    const int passes = esize == 1 ? 2 : 1;
    for (int pass = 0; pass < passes; ++pass) {
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t v = pass ? i >> 8 : i;
            memcpy(h + (size_t)i * esize, &v, esize);  // little-endian: the low esize bytes
        }
        CUDA_CHECK(cudaMemcpyAsync(d_tensor, h, box_bytes, cudaMemcpyHostToDevice, s));
        TensorMapSpec spec = tensor_spec_2d(dtype_for(esize), d_tensor, rows, cols, (uint64_t)cols * esize, rows, cols,
                                            mode_enum[mode]);
        const CUtensorMap map = make_tensor_map(&spec);
        raw_load<<<1, THREADS, tma_smem_bytes(offset + box_bytes, 1024), s>>>(map, offset, box_bytes, d_out, d_abs);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(raw, d_out, box_bytes, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&L.abs_base, d_abs, sizeof L.abs_base, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        for (uint32_t p = 0; p < n; ++p) {
            uint64_t v = 0;
            memcpy(&v, raw + (size_t)p * esize, esize);
            L.logical_at[p] |= pass ? (uint32_t)(v << 8) : (uint32_t)v;
        }
    }
    CUDA_CHECK(cudaFree(d_tensor));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_abs));
    free(h);
    free(raw);
    return L;
}

// Elements of L not where the formula puts them, for base = the absolute
// address (relative = 0) or for base = 0, i.e. indexing relative to the buffer.
static size_t misplaced(const Layout* L, int relative) {
    size_t wrong = 0;
    for (uint32_t r = 0; r < L->rows; ++r)
        for (uint32_t c = 0; c < L->cols; ++c) {
            const uint32_t base = relative ? 0u : L->abs_base;
            const uint32_t p = swizzle_element(base, L->mode, r, c, L->esize, L->cols * L->esize);
            wrong += p >= L->rows * L->cols || L->logical_at[p] != r * L->cols + c;
        }
    return wrong;
}

// The chunk map of the first rows, read from the GPU's data: which logical
// 16-byte chunk of its row sits in each physical chunk.
static void print_chunk_map(const Layout* L) {
    const uint32_t row_bytes = L->cols * L->esize, chunks = row_bytes / 16, per_chunk = 16 / L->esize;
    // One period of the pattern is 8 rows of the span in every mode (256, 512,
    // 1024 B); unswizzled, two rows show the identity.
    for (uint32_t r = 0; r < (L->mode == SWIZZLE_MODE_NONE ? 2u : 8u); ++r) {
        printf("map    %-4s row %u:", mode_name[L->mode], r);
        for (uint32_t k = 0; k < chunks; ++k) {
            const uint32_t logical = L->logical_at[r * L->cols + k * per_chunk];  // first element of physical chunk k
            printf(" %u", logical % L->cols / per_chunk);
        }
        printf("\n");
    }
}

static void dump_layout(FILE* f, const Layout* L, int first) {
    fprintf(f, "%s    {\"mode\": \"%s\", \"elem_bytes\": %u, \"offset\": %u, \"rows\": %u, \"cols\": %u, "
               "\"abs_base\": %u, \"logical_at\": [", first ? "" : ",\n", mode_name[L->mode], L->esize, L->offset,
            L->rows, L->cols, L->abs_base);
    for (uint32_t p = 0; p < L->rows * L->cols; ++p) fprintf(f, "%s%u", p ? ", " : "", L->logical_at[p]);
    fprintf(f, "]}");
}

int main(int argc, char** argv) {
    // --dump FILE is this step's own option (a path, not a number).
    const char* dump_path = NULL;
    int cargc = 0;
    char* cargv[64];
    for (int i = 0; i < argc && cargc < 64; ++i) {
        if (!strcmp(argv[i], "--dump")) {
            if (i + 1 >= argc) die_usage("--dump needs a file name");
            dump_path = argv[++i];
        } else {
            cargv[cargc++] = argv[i];
        }
    }
    Cli cli = parse_cli(cargc, cargv,
                        "05_swizzle: the TMA swizzle formula checked on every element of every mode and element\n"
                        "size, buffer alignment, and shared-memory bank conflicts.\n"
                        "  --dump FILE            also write every recorded layout and measurement as JSON",
                        NULL, 0);
    (void)cli;

    require_hopper();

    print_header("05_swizzle", "the TMA swizzle formula on hardware, and bank conflicts");
    printf("problem: boxes of %d rows of the swizzle span (128 B unswizzled), element sizes 1, 2, 4, 8 B; a 32 x 32 "
           "float tile for the bank patterns\n", BOX_ROWS);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaFuncSetAttribute((const void*)raw_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384));

    FILE* dump = NULL;
    if (dump_path) {
        dump = fopen(dump_path, "w");
        if (!dump) die_usage("cannot write --dump file '%s'", dump_path);
        fprintf(dump, "{\n  \"layouts\": [\n");
    }
    int first = 1;

    // --- 1. every mode x element size --------------------------------------------
    const uint32_t esizes[4] = {1, 2, 4, 8};
    for (int mode = 0; mode < 4; ++mode) {
        const uint32_t row_bytes = mode ? swizzle_span(mode) : ROW_BYTES_NONE;
        for (int e = 0; e < 4; ++e) {
            Layout L = record_layout(mode, esizes[e], 0, BOX_ROWS, row_bytes / esizes[e], s);
            char name[32];
            snprintf(name, sizeof name, "layout_%s_%uB", mode_name[mode], esizes[e]);
            print_check_line(name, misplaced(&L, 0), (size_t)L.rows * L.cols);
            if (esizes[e] == 4) print_chunk_map(&L);
            if (dump) dump_layout(dump, &L, first), first = 0;
            free(L.logical_at);
        }
    }

    // --- 2. the inner-box rule ------------------------------------------------------
    {
        char msg[256];
        TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, 64, 64, 256, 16, 64,
                                            CU_TENSOR_MAP_SWIZZLE_128B);
        const char* broken = tensor_map_rule_broken(&spec, msg, sizeof msg);
        printf("rule   a 64 x 4 B = 256 B inner box with 128B swizzle is %s: %s\n", broken ? "refused" : "ACCEPTED",
               broken ? broken : "(the rule check is missing)");
        print_check_line("rule_inner_box_refused", broken ? 0 : 1, 1);
    }

    // --- 3. alignment -----------------------------------------------------------------
    for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t offset = k ? 64u << k : 0u;  // 0, 128, 256, 512
        Layout L = record_layout(SWIZZLE_MODE_128B, 4, offset, BOX_ROWS, 32, s);
        char name[32];
        snprintf(name, sizeof name, "offset_%u_absolute", offset);
        print_check_line(name, misplaced(&L, 0), (size_t)L.rows * L.cols);
        printf("note   128B box at offset %4u: buffer-relative indexing misplaces %zu of %u elements\n", offset,
               misplaced(&L, 1), L.rows * L.cols);
        if (dump) dump_layout(dump, &L, first), first = 0;
        free(L.logical_at);
    }

    // --- 4. bank conflicts ---------------------------------------------------------------
    float h_tile[32 * 32], h_sums[4 * 32];
    long long h_cycles[4];
    for (int i = 0; i < 32 * 32; ++i) h_tile[i] = (float)i;
    float *d_tile = NULL, *d_sums = NULL;
    long long* d_cycles = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_tile, sizeof h_tile));
    CUDA_CHECK(cudaMalloc((void**)&d_sums, sizeof h_sums));
    CUDA_CHECK(cudaMalloc((void**)&d_cycles, sizeof h_cycles));
    CUDA_CHECK(cudaMemcpyAsync(d_tile, h_tile, sizeof h_tile, cudaMemcpyHostToDevice, s));
    TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, d_tile, 32, 32, 128, 32, 32,
                                        CU_TENSOR_MAP_SWIZZLE_128B);
    const CUtensorMap map128 = make_tensor_map(&spec);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)bank_patterns, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384));
    for (int p = 0; p < 4; ++p) {
        bank_patterns<<<1, 32, tma_smem_bytes(9216 + 4096, 1024), s>>>(map128, d_tile, p, d_sums, d_cycles);
        CHECK_LAUNCH();
    }
    CUDA_CHECK(cudaMemcpyAsync(h_sums, d_sums, sizeof h_sums, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(h_cycles, d_cycles, sizeof h_cycles, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    mbar_check_timeouts();
    // The model: byte addresses of the 32 threads' words, column 0 (row 0 for
    // the row pattern); the swizzled tile at a 1024-aligned base.
    const char* pattern[4] = {"row", "column", "column_padded", "column_swizzled"};
    int degree[4];
    for (int p = 0; p < 4; ++p) {
        uint32_t addr[32];
        for (uint32_t t = 0; t < 32; ++t)
            addr[t] = p == 0 ? 4 * t : p == 1 ? 128 * t : p == 2 ? 132 * t : 4 * swizzle_element(0, SWIZZLE_MODE_128B, t, 0, 4, 128);
        degree[p] = conflict_degree(addr, 32);
    }
    printf("banks  model conflict degree: row %d-way, column %d-way, column_padded %d-way, column_swizzled %d-way\n",
           degree[0], degree[1], degree[2], degree[3]);
    // Every pattern reads all 1024 elements BANK_REPS times, so each thread's
    // sum is known: row pattern thread t sums column t, the others row t.
    size_t wrong = 0;
    for (int p = 0; p < 4; ++p)
        for (int t = 0; t < 32; ++t) {
            double want = 0;
            for (int k = 0; k < 32; ++k) want += p == 0 ? h_tile[k * 32 + t] : h_tile[t * 32 + k];
            wrong += h_sums[p * 32 + t] != (float)(want * BANK_REPS);
        }
    print_check_line("bank_patterns_read_right_values", wrong, 4 * 32);

    print_gpu();
    for (int p = 0; p < 4; ++p)
        printf("TIME   bank %-16s %6.2f cycles per warp access (model: %d-way)\n", pattern[p],
               (double)h_cycles[p] / (BANK_REPS * 32), degree[p]);
    if (dump) {
        fprintf(dump, "\n  ],\n  \"bank\": {\"patterns\": [");
        for (int p = 0; p < 4; ++p)
            fprintf(dump, "%s{\"name\": \"%s\", \"model_degree\": %d, \"cycles_per_access\": %.3f}", p ? ", " : "",
                    pattern[p], degree[p], (double)h_cycles[p] / (BANK_REPS * 32));
        cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        fprintf(dump, "]},\n  \"gpu\": \"%s\"\n}\n", prop.name);
        fclose(dump);
    }
    CUDA_CHECK(cudaFree(d_tile));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_cycles));
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
