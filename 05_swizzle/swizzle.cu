// 05_swizzle: the TMA swizzle formula, proven on hardware; bank conflicts.
//
// With a swizzle mode the TMA does not lay a box out densely: it XORs each
// 16-byte chunk's index with the 128-byte line's index. Parts: every mode and
// element size, every element found where 05_swizzle/swizzle.h says; boxes at
// offsets that break buffer-relative indexing; inner boxes narrower than the
// swizzle span; the inner-box rule; a warp reading a 32 x 32 float tile by
// row, by column, padded and swizzled: bank conflicts, model and clock64.
// New since step 04: 05_swizzle/swizzle.h (swizzle_address, swizzle_row_pitch,
// swizzle_element: plain C, host and device). --dump FILE writes every
// recording as JSON (05_swizzle/layouts_h200.json; notebooks and tests read it).
// Lesson: 05_swizzle/README.md.
//
// Run: make run-05, make check-05, make profile-05 (ncu bank counters).
#include "03_tma_load/mbarrier.cuh"
#include "03_tma_load/tensor_map.h"
#include "03_tma_load/tma_load.cuh"
#include "05_swizzle/swizzle.h"

#include <unistd.h>  // access(): is the --dump folder writable

#define THREADS 128
#define BOX_ROWS 16         // 16 rows of the span: two periods of every mode
#define ROW_BYTES_NONE 128  // the unswizzled case uses 128-byte rows too

static const char* const mode_name[4] = {"none", "32B", "64B", "128B"};
static const CUtensorMapSwizzle mode_enum[4] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                                CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};

// ---- Recording a layout: where did the TMA put each element? -----------------
// Load one box at a 1024-aligned base + offset into poisoned shared memory,
// copy `region` raw bytes out and report the absolute shared address.
__global__ void __launch_bounds__(THREADS)
    raw_load(const __grid_constant__ CUtensorMap map, uint32_t offset, uint32_t box_bytes, uint32_t region,
             uint8_t* out, uint32_t* abs_addr) {
    uint8_t* dst = tma_smem_base<1024>() + offset;
    __shared__ __align__(8) uint64_t bar;
    poison_smem((uint32_t*)dst, region / 4);
    mbar_init_cta(&bar, 1, 1);
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, box_bytes);
        tma_load_2d(dst, &map, 0, 0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    for (uint32_t i = threadIdx.x; i < region; i += blockDim.x) out[i] = dst[i];
    if (threadIdx.x == 0) *abs_addr = smem_u32(dst);
}

// One recorded layout: for every physical element of `region` bytes, the
// logical element index found there (what the GPU did, independent of any
// formula), or -1 where nothing landed.
typedef struct {
    int mode;
    uint32_t esize, offset, rows, cols, region, abs_base;
    int64_t* logical_at;  // [region / esize]
} Layout;

static CUtensorMapDataType dtype_for(uint32_t esize) {
    return esize == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
           : esize == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
           : esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                        : CU_TENSOR_MAP_DATA_TYPE_UINT64;
}

// Loads a rows x cols box of esize-byte elements at `offset` with `mode`.
// Element (r, c) holds its own index r * cols + c; 1-byte elements cannot
// hold it, so they are loaded twice (low byte, then high byte) and combined.
// Unwritten (poison) positions come back as -1, for elements of 2 bytes or
// more; for 1-byte elements 0xFF is also data, so they cannot be told apart.
static Layout record_layout(int mode, uint32_t esize, uint32_t offset, uint32_t rows, uint32_t cols,
                            uint32_t region, cudaStream_t s) {
    const uint32_t n = rows * cols, box_bytes = n * esize, slots = region / esize;
    Layout L = {mode, esize,  offset, rows,
                cols, region, 0,      (int64_t*)xmalloc(slots * sizeof(int64_t), "a layout")};
    uint8_t *h = (uint8_t*)xmalloc(box_bytes, "a box"), *raw = (uint8_t*)xmalloc(region, "a raw box");
    uint8_t *d_tensor = NULL, *d_out = NULL;
    uint32_t* d_abs = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_tensor, box_bytes));
    CUDA_CHECK(cudaMalloc((void**)&d_out, region));
    CUDA_CHECK(cudaMalloc((void**)&d_abs, sizeof(uint32_t)));
    memset(L.logical_at, 0, slots * sizeof(int64_t));
    for (int pass = 0; pass < (esize == 1 ? 2 : 1); ++pass) {
        for (uint32_t i = 0; i < n; ++i) {
            const uint64_t v = pass ? i >> 8 : i;
            memcpy(h + (size_t)i * esize, &v, esize);  // little-endian: the low esize bytes
        }
        CUDA_CHECK(cudaMemcpyAsync(d_tensor, h, box_bytes, cudaMemcpyHostToDevice, s));
        const TensorMapSpec spec = tensor_spec_2d(dtype_for(esize), d_tensor, rows, cols,
                                                  (uint64_t)cols * esize, rows, cols, mode_enum[mode]);
        const CUtensorMap map = make_tensor_map(&spec, "a recorded layout");
        raw_load<<<1, THREADS, tma_smem_bytes(offset + region, 1024), s>>>(map, offset, box_bytes, region,
                                                                           d_out, d_abs);
        CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpyAsync(raw, d_out, region, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaMemcpyAsync(&L.abs_base, d_abs, sizeof L.abs_base, cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        for (uint32_t p = 0; p < slots; ++p) {
            uint64_t v = 0, poison = 0;
            memcpy(&v, raw + (size_t)p * esize, esize);
            memset(&poison, POISON_BYTE, esize);
            if (v == poison && esize > 1)
                L.logical_at[p] = -1;  // 1-byte elements: 0xFF is also data
            else if (L.logical_at[p] >= 0)
                L.logical_at[p] |= pass ? (int64_t)(v << 8) : (int64_t)v;
        }
    }
    CUDA_CHECK(cudaFree(d_tensor));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_abs));
    free(h);
    free(raw);
    return L;
}

// Elements of L not where swizzle_element puts them, for base = the absolute
// address (relative = 0) or base = 0, i.e. indexing relative to the buffer.
// `pitch`, if not 0, replaces the row pitch (to test another reading).
static size_t misplaced(const Layout* L, int relative, uint32_t pitch) {
    size_t wrong = 0;
    const uint32_t inner = L->cols * L->esize, base = relative ? 0u : L->abs_base;
    for (uint32_t r = 0; r < L->rows; ++r)
        for (uint32_t c = 0; c < L->cols; ++c) {
            const uint32_t p =
                pitch ? (swizzle_address(base + r * pitch + c * L->esize, L->mode) - base) / L->esize
                      : swizzle_element(base, L->mode, r, c, L->esize, inner);
            wrong += p >= L->region / L->esize || L->logical_at[p] != (int64_t)(r * L->cols + c);
        }
    return wrong;
}

// The chunk map of the first rows, read from the GPU's data: which logical
// 16-byte chunk of its row sits in each physical chunk. One period of the
// pattern is 8 rows of the span in every mode (256, 512, 1024 B); unswizzled,
// two rows show the identity.
static void print_chunk_map(const Layout* L) {
    const uint32_t chunks = L->cols * L->esize / 16, per_chunk = 16 / L->esize;
    for (uint32_t r = 0; r < (L->mode == SWIZZLE_MODE_NONE ? 2u : 8u); ++r) {
        printf("map    %-4s row %u:", mode_name[L->mode], r);
        for (uint32_t k = 0; k < chunks; ++k)
            printf(" %lld", (long long)(L->logical_at[r * L->cols + k * per_chunk] % L->cols / per_chunk));
        printf("\n");
    }
}

// --dump FILE: written to FILE.tmp and renamed over FILE only when complete,
// so a run that fails (or finds no GPU) never leaves a truncated recording.
// The folder is checked before the GPU is touched.
static void check_dump_folder(const char* path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (access(slash ? (dir[0] ? dir : "/") : ".", W_OK) != 0)
        die_usage("cannot write --dump file '%s': its folder is not writable", path);
}

static void check_arguments(const Cli* cli) {
    if (cli->dump_path) check_dump_folder(cli->dump_path);
}

static FILE* open_dump(const char* path, char* tmp, size_t cap) {
    snprintf(tmp, cap, "%s.tmp", path);
    FILE* f = fopen(tmp, "w");
    if (!f) die_usage("cannot write --dump file '%s'", tmp);
    return f;
}

static int close_dump(FILE* f, const char* tmp, const char* path) {
    const int bad = ferror(f) | fclose(f);
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "error: writing the --dump file '%s' failed\n", path);
        return EXIT_USAGE;
    }
    return 0;
}

// One layout as a JSON object; `first` of its list gets no leading comma.
static void dump_layout(FILE* f, const Layout* L, int first) {
    if (!f) return;
    fprintf(f,
            "%s    {\"mode\": \"%s\", \"elem_bytes\": %u, \"offset\": %u, \"rows\": %u, \"cols\": %u, "
            "\"region\": %u, \"abs_base\": %u, \"logical_at\": [",
            first ? "" : ",\n", mode_name[L->mode], L->esize, L->offset, L->rows, L->cols, L->region,
            L->abs_base);
    for (uint32_t p = 0; p < L->region / L->esize; ++p)
        fprintf(f, "%s%lld", p ? ", " : "", (long long)L->logical_at[p]);
    fprintf(f, "]}");
}

// ---- Part 1: every mode x element size ---------------------------------------------
static void part_layouts(FILE* dump, cudaStream_t s) {
    const uint32_t esizes[4] = {1, 2, 4, 8};
    for (int mode = 0; mode < 4; ++mode) {
        const uint32_t row_bytes = swizzle_row_pitch(mode, ROW_BYTES_NONE);
        for (int e = 0; e < 4; ++e) {
            const Layout L =
                record_layout(mode, esizes[e], 0, BOX_ROWS, row_bytes / esizes[e], BOX_ROWS * row_bytes, s);
            char name[32];
            snprintf(name, sizeof name, "layout_%s_%uB", mode_name[mode], esizes[e]);
            report_check(name, misplaced(&L, 0, 0), (size_t)L.rows * L.cols);
            if (esizes[e] == 4) print_chunk_map(&L);
            dump_layout(dump, &L, mode == 0 && e == 0);
            free(L.logical_at);
        }
    }
}

// ---- Part 2: alignment ---------------------------------------------------------------
// The same 128B box at 0, 128, 256 and 512 bytes past a 1024-aligned base:
// the TMA places it by absolute address bits; indexing relative to the buffer
// is right only at the aligned offset.
static void part_alignment(FILE* dump, cudaStream_t s) {
    for (uint32_t k = 0; k < 4; ++k) {
        const uint32_t offset = k ? 64u << k : 0u;  // 0, 128, 256, 512
        const Layout L = record_layout(SWIZZLE_MODE_128B, 4, offset, BOX_ROWS, 32, BOX_ROWS * 128, s);
        char name[32];
        snprintf(name, sizeof name, "offset_%u_absolute", offset);
        report_check(name, misplaced(&L, 0, 0), (size_t)L.rows * L.cols);
        printf("note   128B box at offset %4u: buffer-relative indexing misplaces %zu of %u elements\n",
               offset, misplaced(&L, 1, 0), L.rows * L.cols);
        dump_layout(dump, &L, 0);
        free(L.logical_at);
    }
}

// ---- Part 3: inner boxes narrower than the swizzle span ----------------------------
// A 128B-swizzled box whose rows are 32 or 64 B, and a 64B-swizzled one with
// 32-byte rows. Rows could be packed at their own width or given the full
// span each: shared memory is poisoned over rows x span bytes and every
// element looked for. The span it is (swizzle_row_pitch); the note says what
// reading the rows as packed would get wrong.
static void part_narrow_boxes(FILE* dump, cudaStream_t s) {
    const int modes[3] = {SWIZZLE_MODE_128B, SWIZZLE_MODE_128B, SWIZZLE_MODE_64B};
    const uint32_t inner[3] = {32, 64, 32};
    for (int k = 0; k < 3; ++k) {
        const uint32_t span = swizzle_span_bytes(mode_enum[modes[k]]);
        const Layout L = record_layout(modes[k], 4, 0, BOX_ROWS, inner[k] / 4, BOX_ROWS * span, s);
        char name[48];
        snprintf(name, sizeof name, "narrow_%s_%uB_rows", mode_name[modes[k]], inner[k]);
        // Every element in its place, and the rest of each span-wide row left
        // as it was (poison): a spare slot that was written counts as wrong.
        size_t unwritten = 0;
        for (uint32_t p = 0; p < L.region / L.esize; ++p) unwritten += L.logical_at[p] == -1;
        const size_t spare = L.region / L.esize - (size_t)L.rows * L.cols;
        report_check(name, misplaced(&L, 0, 0) + (unwritten > spare ? unwritten - spare : spare - unwritten),
                     (size_t)L.rows * L.cols);
        printf(
            "note   %-4s swizzle, %2u-byte rows: %u B apart, as the span; packed %u B apart, %zu of %u "
            "elements "
            "would be misplaced\n",
            mode_name[modes[k]], inner[k], span, inner[k], misplaced(&L, 0, inner[k]), L.rows * L.cols);
        dump_layout(dump, &L, k == 0);
        free(L.logical_at);
    }
}

// ---- Part 4: the inner-box rule ------------------------------------------------------
static void part_rule(void) {
    char msg[256];
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_UINT32, (const void*)256, 64, 64, 256,
                                              16, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    const char* broken = tensor_map_rule_broken(&spec, msg, sizeof msg);
    printf("rule   a 64 x 4 B = 256 B inner box with 128B swizzle is %s: %s\n",
           broken ? "refused" : "ACCEPTED", broken ? broken : "(the rule check is missing)");
    report_check("rule_inner_box_refused", broken ? 0 : 1, 1);
}

// ---- Part 5: one warp, four access patterns on a 32 x 32 float tile --------
// pattern 0: row      thread t reads tile[k][t]
// pattern 1: column   thread t reads tile[t][k]            (unswizzled, stride 128 B)
// pattern 2: padded   thread t reads pad[t][k], rows of 33 floats
// pattern 3: swizzled thread t reads element (t, k) of the 128B-swizzled tile,
//                     at swizzle_element(): the index a kernel must use
// One launch per pattern (so ncu's counters, make profile-05, are per
// pattern). Every value read in the first sweep is stored and checked on the
// host, so a wrong index (a swizzle slip, say) cannot pass; then the sweep
// is timed `reps` times with clock64.
static __device__ __forceinline__ float read_swizzled(const float* swz, uint32_t swz_base, uint32_t t,
                                                      uint32_t k) {
    // LAB-BEGIN: read element (row t, column k) of the 128B-swizzled tile: where did the TMA put it? (05_swizzle/swizzle.h; the base is absolute)
    return swz[swizzle_element(swz_base, SWIZZLE_MODE_128B, t, k, 4, 128)];
    // LAB-STUB: (void)swz_base;
    // LAB-STUB: return swz[t * 32 + k];
    // LAB-END
}

static __device__ __forceinline__ float read_pattern(int p, const float* plain, const float* pad,
                                                     const float* swz, uint32_t swz_base, uint32_t t,
                                                     uint32_t k) {
    if (p == 0) return plain[k * 32 + t];
    if (p == 1) return plain[t * 32 + k];
    if (p == 2) return pad[t * 33 + k];
    return read_swizzled(swz, swz_base, t, k);
}

__global__ void __launch_bounds__(32)
    bank_patterns(const __grid_constant__ CUtensorMap map128, const float* tile_in, int p, int reps,
                  float* reads, float* sums, long long* cycles) {
    uint8_t* base = tma_smem_base<1024>();
    float* plain = (float*)base;         // [32][32], dense
    float* pad = (float*)(base + 4096);  // [32][33], one float of padding per row: 4224 B
    float* swz = (float*)(base + 9216);  // [32][32], as the TMA lays it out with 128B swizzle: 1024-aligned,
                                         // past the padded tile's end at 8320
    __shared__ __align__(8) uint64_t bar;
    const uint32_t t = threadIdx.x;
    for (int r = 0; r < 32; ++r) {
        plain[r * 32 + t] = tile_in[r * 32 + t];
        pad[r * 33 + t] = tile_in[r * 32 + t];
    }
    mbar_init_cta(&bar, 1,
                  1);  // its __syncthreads also orders the tile stores above for the (one-warp) block
    if (t == 0) {
        mbar_arrive_expect_tx(&bar, 4096);
        tma_load_2d(swz, &map128, 0, 0, &bar);
    }
    MBAR_WAIT(&bar, 0);
    const uint32_t swz_base = smem_u32(swz);
    for (uint32_t k = 0; k < 32; ++k)
        reads[(p * 32 + t) * 32 + k] = read_pattern(p, plain, pad, swz, swz_base, t, k);
    float acc = 0.f;
    __syncwarp();
    const long long start = clock64();
    for (int rep = 0; rep < reps; ++rep)
#pragma unroll 8
        for (uint32_t k = 0; k < 32; ++k) acc += read_pattern(p, plain, pad, swz, swz_base, t, k);
    __syncwarp();
    const long long stop = clock64();
    sums[p * 32 + t] = acc;  // keeps the timed reads from being optimized away
    if (t == 0) cycles[p] = stop - start;
}

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

static void part_banks(int reps, FILE* dump, cudaStream_t s) {
    float h_tile[32 * 32], h_reads[4 * 32 * 32], want[4 * 32 * 32];
    long long h_cycles[4];
    for (int i = 0; i < 32 * 32; ++i) h_tile[i] = (float)i;  // position-coded: element (r, c) is r * 32 + c
    float *d_tile = NULL, *d_reads = NULL, *d_sums = NULL;
    long long* d_cycles = NULL;
    CUDA_CHECK(cudaMalloc((void**)&d_tile, sizeof h_tile));
    CUDA_CHECK(cudaMalloc((void**)&d_reads, sizeof h_reads));
    CUDA_CHECK(cudaMalloc((void**)&d_sums, 4 * 32 * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&d_cycles, sizeof h_cycles));
    CUDA_CHECK(cudaMemcpyAsync(d_tile, h_tile, sizeof h_tile, cudaMemcpyHostToDevice, s));
    poison_device(d_reads, sizeof h_reads, s);
    const TensorMapSpec spec = tensor_spec_2d(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, d_tile, 32, 32, 128, 32, 32,
                                              CU_TENSOR_MAP_SWIZZLE_128B);
    const CUtensorMap map128 = make_tensor_map(&spec, "the bank-pattern tile");
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)bank_patterns, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384));
    for (int p = 0; p < 4; ++p) {
        bank_patterns<<<1, 32, tma_smem_bytes(9216 + 4096, 1024), s>>>(map128, d_tile, p, reps, d_reads,
                                                                       d_sums, d_cycles);
        CHECK_LAUNCH();
    }
    // What each thread must have read: row pattern thread t, step k: element
    // (k, t); the column patterns: element (t, k).
    for (int p = 0; p < 4; ++p)
        for (int t = 0; t < 32; ++t)
            for (int k = 0; k < 32; ++k)
                want[(p * 32 + t) * 32 + k] = h_tile[p == 0 ? k * 32 + t : t * 32 + k];
    check_device("bank_patterns_read_right_elements", d_reads, (const uint32_t*)want, 4 * 32 * 32, s);
    CUDA_CHECK(cudaMemcpyAsync(h_cycles, d_cycles, sizeof h_cycles, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    // The model: byte addresses of the 32 threads' words at step 0, the
    // swizzled tile at a 1024-aligned base.
    const char* pattern[4] = {"row", "column", "column_padded", "column_swizzled"};
    int degree[4];
    for (int p = 0; p < 4; ++p) {
        uint32_t addr[32];
        for (uint32_t t = 0; t < 32; ++t)
            addr[t] = p == 0   ? 4 * t
                      : p == 1 ? 128 * t
                      : p == 2 ? 132 * t
                               : 4 * swizzle_element(0, SWIZZLE_MODE_128B, t, 0, 4, 128);
        degree[p] = conflict_degree(addr, 32);
        record_time_line("bank %-16s %6.2f cycles per warp access (model: %d-way)", pattern[p],
                         (double)h_cycles[p] / (reps * 32), degree[p]);
    }
    printf(
        "banks  model conflict degree: row %d-way, column %d-way, column_padded %d-way, column_swizzled "
        "%d-way\n",
        degree[0], degree[1], degree[2], degree[3]);
    if (dump) {
        fprintf(dump, "\n  ],\n  \"bank\": {\"patterns\": [");
        for (int p = 0; p < 4; ++p)
            fprintf(dump, "%s{\"name\": \"%s\", \"model_degree\": %d, \"cycles_per_access\": %.3f}",
                    p ? ", " : "", pattern[p], degree[p], (double)h_cycles[p] / (reps * 32));
        fprintf(dump, "]},\n");
    }
    CUDA_CHECK(cudaFree(d_tile));
    CUDA_CHECK(cudaFree(d_reads));
    CUDA_CHECK(cudaFree(d_sums));
    CUDA_CHECK(cudaFree(d_cycles));
}

// ---------------------------------------------------------------------------
static const CliSpec kCli = {
    "05_swizzle: the TMA swizzle formula checked on every element of every mode and element\n"
    "size, narrow boxes, buffer alignment, and shared-memory bank conflicts.\n"
    "--quick times the bank patterns over 4 sweeps instead of 64.",
    CLI_DUMP, NULL, 0, check_arguments};

int main(int argc, char** argv) {
    const Cli cli = parse_cli(argc, argv, &kCli);  // and check_arguments
    require_hopper();
    char tmp[4096];
    FILE* dump = cli.dump_path ? open_dump(cli.dump_path, tmp, sizeof tmp) : NULL;
    print_header("05_swizzle", "the TMA swizzle formula on hardware, and bank conflicts");
    printf(
        "problem: boxes of %d rows of the swizzle span (128 B unswizzled), element sizes 1, 2, 4, 8 B; "
        "narrow "
        "boxes; a 32 x 32 float tile for the bank patterns\n",
        BOX_ROWS);
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_CHECK(
        cudaFuncSetAttribute((const void*)raw_load, cudaFuncAttributeMaxDynamicSharedMemorySize, 16384));
    if (dump) fprintf(dump, "{\n  \"layouts\": [\n");

    part_layouts(dump, s);
    part_alignment(dump, s);
    if (dump) fprintf(dump, "\n  ],\n  \"narrow_layouts\": [\n");
    part_narrow_boxes(dump, s);
    part_rule();
    part_banks(cli.quick ? 4 : 64, dump, s);

    if (dump) {
        cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        fprintf(dump, "  \"gpu\": \"%s\"\n}\n", prop.name);
        if (close_dump(dump, tmp, cli.dump_path)) return EXIT_USAGE;
    }
    CUDA_CHECK(cudaStreamDestroy(s));
    return finish();
}
