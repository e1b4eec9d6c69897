// probe_inject.c: the probe's host side, a library the CUDA driver loads into a
// program (CUDA_INJECTION64_PATH=libshadow_probe.so; or LD_PRELOAD with
// SHADOW_TOOL_PRELOAD=1). For every module the program loads it asks CUDA's
// Sanitizer API to patch every instrumentation point with the counting
// functions of probe_patches.cu; each kernel gets a ProbeRecord in device
// memory as the patches' userdata; the records are read back at every
// synchronization and at exit, and written as text to $SHADOW_PROBE_OUT
// (tools/shadow_probe.py turns them into the probe's record).
//
// Environment:
//   SHADOW_PROBE_PATCHES  the patch fatbin (default: probe_patches.fatbin beside this library)
//   SHADOW_PROBE_OUT      where the text goes (default: stderr)
//   SHADOW_PROBE_CLASSES  a comma-separated list of point ids to patch (default: all, 1..40)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/shadow/tool/probe_record.h"
#include "common/shadow/tool/tool_host.h"
#include "common/shadow/tool/tool_sanitizer.h"

static const struct {
    Sanitizer_InstructionId id;
    const char *name, *patch;
} kPoints[] = {
    {SANITIZER_INSTRUCTION_BLOCK_ENTER, "BLOCK_ENTER", "probe_block_enter"},
    {SANITIZER_INSTRUCTION_BLOCK_EXIT, "BLOCK_EXIT", "probe_block_exit"},
    {SANITIZER_INSTRUCTION_GLOBAL_MEMORY_ACCESS, "GLOBAL_MEMORY_ACCESS", "probe_global_access"},
    {SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, "SHARED_MEMORY_ACCESS", "probe_shared_access"},
    {SANITIZER_INSTRUCTION_LOCAL_MEMORY_ACCESS, "LOCAL_MEMORY_ACCESS", "probe_local_access"},
    {SANITIZER_INSTRUCTION_BARRIER, "BARRIER", "probe_barrier"},
    {SANITIZER_INSTRUCTION_SYNCWARP, "SYNCWARP", "probe_syncwarp"},
    {SANITIZER_INSTRUCTION_SHFL, "SHFL", "probe_shfl"},
    {SANITIZER_INSTRUCTION_CALL, "CALL", "probe_call"},
    {SANITIZER_INSTRUCTION_RET, "RET", "probe_ret"},
    {SANITIZER_INSTRUCTION_DEVICE_SIDE_MALLOC, "DEVICE_SIDE_MALLOC", "probe_malloc"},
    {SANITIZER_INSTRUCTION_DEVICE_SIDE_FREE, "DEVICE_SIDE_FREE", "probe_free"},
    {SANITIZER_INSTRUCTION_CUDA_BARRIER, "CUDA_BARRIER", "probe_cuda_barrier"},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "MEMCPY_ASYNC", "probe_memcpy_async"},
    {SANITIZER_INSTRUCTION_PIPELINE_COMMIT, "PIPELINE_COMMIT", "probe_pipeline_commit"},
    {SANITIZER_INSTRUCTION_PIPELINE_WAIT, "PIPELINE_WAIT", "probe_pipeline_wait"},
    {SANITIZER_INSTRUCTION_REMOTE_SHARED_MEMORY_ACCESS, "REMOTE_SHARED_MEMORY_ACCESS",
     "probe_remote_shared_access"},
    {SANITIZER_INSTRUCTION_DEVICE_ALIGNED_MALLOC, "DEVICE_ALIGNED_MALLOC", "probe_aligned_malloc"},
    {SANITIZER_INSTRUCTION_MATRIX_MEMORY_ACCESS, "MATRIX_MEMORY_ACCESS", "probe_matrix_access"},
    {SANITIZER_INSTRUCTION_CACHE_CONTROL, "CACHE_CONTROL", "probe_cache_control"},
    {SANITIZER_INSTRUCTION_CLUSTER_BARRIER_ARRIVE, "CLUSTER_BARRIER_ARRIVE", "probe_cluster_arrive"},
    {SANITIZER_INSTRUCTION_CLUSTER_BARRIER_WAIT, "CLUSTER_BARRIER_WAIT", "probe_cluster_wait"},
    {SANITIZER_INSTRUCTION_WARPGROUP_MMA_ASYNC, "WARPGROUP_MMA_ASYNC", "probe_wgmma"},
    {SANITIZER_INSTRUCTION_WARPGROUP_WAIT_GROUP, "WARPGROUP_WAIT_GROUP", "probe_wgmma_wait"},
    {SANITIZER_INSTRUCTION_WARPGROUP_FENCE, "WARPGROUP_FENCE", "probe_wgmma_fence"},
    {SANITIZER_INSTRUCTION_ASYNC_STORE, "ASYNC_STORE", "probe_async_store"},
    {SANITIZER_INSTRUCTION_ASYNC_REDUCTION, "ASYNC_REDUCTION", "probe_async_reduction"},
    {SANITIZER_INSTRUCTION_SET_SHARED_MEMORY_SIZE, "SET_SHARED_MEMORY_SIZE", "probe_set_smem_size"},
    {SANITIZER_INSTRUCTION_BARRIER_RELEASE, "BARRIER_RELEASE", "probe_barrier_release"},
    {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "BULK_COPY_GLOBAL_TO_SHARED", "probe_bulk_g2s"},
    {SANITIZER_INSTRUCTION_TENSOR_CORE_BARRIER, "TENSOR_CORE_BARRIER", "probe_tensor_core_barrier"},
    {SANITIZER_INSTRUCTION_MEMSET_SHARED, "MEMSET_SHARED", "probe_memset_shared"},
    {SANITIZER_INSTRUCTION_SYNCWARP_RELEASE, "SYNCWARP_RELEASE", "probe_syncwarp_release"},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC_BARRIER, "MEMCPY_ASYNC_BARRIER", "probe_memcpy_async_barrier"},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_GLOBAL, "BULK_COPY_SHARED_TO_GLOBAL", "probe_bulk_s2g"},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_SHARED, "BULK_COPY_SHARED_TO_SHARED", "probe_bulk_s2s"},
    {SANITIZER_INSTRUCTION_BULK_REDUCTION_SHARED_TO_GLOBAL, "BULK_REDUCTION_SHARED_TO_GLOBAL",
     "probe_bulk_reduce_s2g"},
    {SANITIZER_INSTRUCTION_BULK_REDUCTION_SHARED_TO_SHARED, "BULK_REDUCTION_SHARED_TO_SHARED",
     "probe_bulk_reduce_s2s"},
    {SANITIZER_INSTRUCTION_CUDA_BARRIER_ATTEMPT, "CUDA_BARRIER_ATTEMPT", "probe_cuda_barrier_attempt"},
    {SANITIZER_INSTRUCTION_CLUSTER_BARRIER_WAIT_ENTRY, "CLUSTER_BARRIER_WAIT_ENTRY",
     "probe_cluster_wait_entry"},
};
#define NPOINTS (sizeof kPoints / sizeof kPoints[0])

#define MAX_CONTEXTS 8
#define MAX_MODULES 512
#define MAX_FUNCTIONS 2048

typedef struct {
    CUmodule module;
    size_t cubin_bytes;
    int result[PROBE_CLASSES];  // sanitizerPatchInstructions' result per point (-1: not asked)
    int patch_result;           // sanitizerPatchModule's
    int debug_line;             // the cubin has a .debug_line section (built with -lineinfo or -G)
    char object[256];           // the loaded object its cubin bytes lie in (dladdr), or "heap"
} Module;

typedef struct {
    CUfunction function;
    CUcontext context;
    char name[512];
    int module;  // index into g_modules, -1 if unknown
    uint64_t fn_pc, fn_size;
    unsigned launches, graph_launches;
    unsigned grid[3], block[3], cluster[3];
    ProbeRecord* dev;
    ProbeRecord host;
    int read_back, dirty;
} Function;

static CUcontext g_contexts[MAX_CONTEXTS];
static int g_ncontexts;
static Module g_modules[MAX_MODULES];
static int g_nmodules;
static Function g_functions[MAX_FUNCTIONS];
static int g_nfunctions;
static int g_wanted[PROBE_CLASSES];
static char g_patches[4096];
static FILE* g_out;
static int g_initialized, g_exit_registered, g_patch_load_failed;

static int find_module(CUmodule m) {
    for (int i = 0; i < g_nmodules; ++i)
        if (g_modules[i].module == m) return i;
    return -1;
}

static void module_loaded(const Sanitizer_ResourceModuleData* d) {
    int have = 0;
    for (int i = 0; i < g_ncontexts; ++i) have |= g_contexts[i] == d->context;
    if (!have) {
        SanitizerResult r = sanitizerAddPatchesFromFile(g_patches, d->context);
        if (r != SANITIZER_SUCCESS) {
            fprintf(stderr, "shadow probe: cannot load the patches %s: %s\n", g_patches,
                    tool_result_string(r));
            g_patch_load_failed = 1;
            return;
        }
        if (g_ncontexts < MAX_CONTEXTS) g_contexts[g_ncontexts++] = d->context;
    }
    if (g_nmodules == MAX_MODULES) return;
    Module* m = &g_modules[g_nmodules++];
    m->module = d->module;
    m->cubin_bytes = d->cubinSize;
    m->debug_line = tool_has_section(d->pCubin, d->cubinSize, ".debug_line");
    Dl_info info;
    snprintf(m->object, sizeof m->object, "%s",
             dladdr(d->pCubin, &info) && info.dli_fname ? info.dli_fname : "heap");
    for (unsigned i = 0; i < NPOINTS; ++i) {
        const unsigned id = (unsigned)kPoints[i].id;
        m->result[id] =
            g_wanted[id] ? (int)sanitizerPatchInstructions(kPoints[i].id, d->module, kPoints[i].patch) : -1;
    }
    m->patch_result = (int)sanitizerPatchModule(d->module);
}

static Function* function_of(CUcontext ctx, CUmodule module, CUfunction f, const char* name) {
    for (int i = 0; i < g_nfunctions; ++i)
        if (g_functions[i].function == f) return &g_functions[i];
    if (g_nfunctions == MAX_FUNCTIONS) return NULL;
    Function* fn = &g_functions[g_nfunctions++];
    memset(fn, 0, sizeof *fn);
    fn->function = f;
    fn->context = ctx;
    snprintf(fn->name, sizeof fn->name, "%s", name ? name : "?");
    fn->module = find_module(module);
    if (sanitizerGetFunctionPcAndSize(module, fn->name, &fn->fn_pc, &fn->fn_size) != SANITIZER_SUCCESS)
        fn->fn_pc = fn->fn_size = 0;
    if (sanitizerAlloc(ctx, (void**)&fn->dev, sizeof(ProbeRecord)) != SANITIZER_SUCCESS) fn->dev = NULL;
    if (fn->dev) sanitizerMemset(fn->dev, 0, sizeof(ProbeRecord), NULL);
    if (fn->dev) sanitizerStreamSynchronize(NULL);
    return fn;
}

static void read_back(int only_dirty) {
    for (int i = 0; i < g_nfunctions; ++i) {
        Function* fn = &g_functions[i];
        if (!fn->dev || (only_dirty && !fn->dirty)) continue;
        if (sanitizerMemcpyDeviceToHost(&fn->host, fn->dev, sizeof fn->host, NULL) == SANITIZER_SUCCESS) {
            fn->read_back = 1;
            fn->dirty = 0;
        }
    }
}

static void write_out(void) {
    FILE* o = g_out ? g_out : stderr;
    fprintf(o, "probe patches %s%s\n", g_patches, g_patch_load_failed ? " (failed to load)" : "");
    for (int i = 0; i < g_nmodules; ++i) {
        fprintf(o, "module %d cubin_bytes %zu patch_module %d debug_line %d object %s results", i,
                g_modules[i].cubin_bytes, g_modules[i].patch_result, g_modules[i].debug_line,
                g_modules[i].object[0] ? g_modules[i].object : "?");
        for (unsigned k = 0; k < NPOINTS; ++k)
            fprintf(o, " %u:%d", (unsigned)kPoints[k].id, g_modules[i].result[kPoints[k].id]);
        fprintf(o, "\n");
    }
    for (int i = 0; i < g_nfunctions; ++i) {
        const Function* fn = &g_functions[i];
        fprintf(o,
                "function %s module %d launches %u graph_launches %u fn_pc 0x%llx fn_size %llu grid %u,%u,%u "
                "block %u,%u,%u cluster %u,%u,%u read_back %d\n",
                fn->name, fn->module, fn->launches, fn->graph_launches, (unsigned long long)fn->fn_pc,
                (unsigned long long)fn->fn_size, fn->grid[0], fn->grid[1], fn->grid[2], fn->block[0],
                fn->block[1], fn->block[2], fn->cluster[0], fn->cluster[1], fn->cluster[2], fn->read_back);
        if (!fn->read_back) continue;
        const ProbeRecord* r = &fn->host;
        for (unsigned k = 0; k < NPOINTS; ++k) {
            const unsigned c = (unsigned)kPoints[k].id;
            if (!r->calls[c]) continue;
            fprintf(o, "  class %u %s calls %llu\n", c, kPoints[k].name, r->calls[c]);
            for (unsigned p = 0; p < PROBE_PCS; ++p)
                if (r->pcs[c][p])
                    fprintf(o, "    pc 0x%llx offset 0x%llx calls %llu\n", r->pcs[c][p],
                            r->pcs[c][p] - fn->fn_pc, r->pc_calls[c][p]);
            for (unsigned s = 0; s < PROBE_SAMPLES && s < r->nsamples[c]; ++s) {
                const ProbeSample* x = &r->samples[c][s];
                fprintf(o,
                        "    sample offset 0x%llx block %u thread %u args 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx "
                        "0x%llx\n",
                        x->pc - fn->fn_pc, x->block, x->thread, x->arg[0], x->arg[1], x->arg[2], x->arg[3],
                        x->arg[4], x->arg[5]);
            }
        }
    }
    fprintf(o, "end\n");
    fflush(o);
}

static void at_exit(void) {
    read_back(0);
    write_out();
    if (g_out) fclose(g_out);
    g_out = NULL;
}

static void note_launch(const Sanitizer_LaunchData* l, int graph) {
    Function* fn = function_of(l->context, l->module, l->function, l->functionName);
    if (!fn) return;
    if (graph)
        ++fn->graph_launches;
    else
        ++fn->launches;
    if (!fn->grid[0]) {
        fn->grid[0] = l->gridDim_x, fn->grid[1] = l->gridDim_y, fn->grid[2] = l->gridDim_z;
        fn->block[0] = l->blockDim_x, fn->block[1] = l->blockDim_y, fn->block[2] = l->blockDim_z;
        fn->cluster[0] = l->clusterDim_x, fn->cluster[1] = l->clusterDim_y, fn->cluster[2] = l->clusterDim_z;
    }
    fn->dirty = 1;
    if (fn->dev) sanitizerSetCallbackData(l->function, fn->dev);
    // Registered after the CUDA runtime registered its own teardown, so it runs before it.
    if (!g_exit_registered) g_exit_registered = !atexit(at_exit);
}

static void SANITIZERAPI callback(void* userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                                  const void* cbdata) {
    (void)userdata;
    if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED)
        module_loaded((const Sanitizer_ResourceModuleData*)cbdata);
    else if (domain == SANITIZER_CB_DOMAIN_RESOURCE &&
             cbid == SANITIZER_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
        read_back(0);
    else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN)
        note_launch((const Sanitizer_LaunchData*)cbdata, 0);
    else if (domain == SANITIZER_CB_DOMAIN_GRAPHS && cbid == SANITIZER_CBID_GRAPHS_NODE_LAUNCH_BEGIN) {
        const Sanitizer_GraphNodeLaunchData* g = (const Sanitizer_GraphNodeLaunchData*)cbdata;
        if (g->nodeType == CU_GRAPH_NODE_TYPE_KERNEL && !g->isGraphUpload) note_launch(&g->launchData, 1);
    } else if (domain == SANITIZER_CB_DOMAIN_SYNCHRONIZE)
        read_back(1);
}

int InitializeInjection(void) {
    if (g_initialized) return 1;
    g_initialized = 1;
    const char* patches = getenv("SHADOW_PROBE_PATCHES");
    if (patches) {
        snprintf(g_patches, sizeof g_patches, "%s", patches);
    } else {  // beside this library
        Dl_info info;
        if (dladdr((void*)InitializeInjection, &info) && info.dli_fname) {
            snprintf(g_patches, sizeof g_patches, "%s", info.dli_fname);
            char* slash = strrchr(g_patches, '/');
            snprintf(slash ? slash + 1 : g_patches,
                     sizeof g_patches - (slash ? (size_t)(slash + 1 - g_patches) : 0),
                     "probe_patches.fatbin");
        }
    }
    const char* out = getenv("SHADOW_PROBE_OUT");
    if (out && !(g_out = fopen(out, "w"))) fprintf(stderr, "shadow probe: cannot write %s\n", out);
    const char* classes = getenv("SHADOW_PROBE_CLASSES");
    for (unsigned i = 0; i < PROBE_CLASSES; ++i) g_wanted[i] = !classes;
    for (const char* p = classes; p && *p;) {
        char* end;
        const long id = strtol(p, &end, 10);
        if (end == p) break;
        if (id > 0 && id < PROBE_CLASSES) g_wanted[id] = 1;
        p = *end == ',' ? end + 1 : end;
    }
    Sanitizer_SubscriberHandle handle;
    SanitizerResult r = sanitizerSubscribe(&handle, callback, NULL);
    if (r != SANITIZER_SUCCESS) {
        fprintf(stderr, "shadow probe: sanitizerSubscribe failed: %s\n", tool_result_string(r));
        return 0;
    }
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_RESOURCE);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_LAUNCH);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_GRAPHS);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_SYNCHRONIZE);
    fprintf(stderr, "shadow probe: injected (patches %s)\n", g_patches);
    return 1;
}

// LD_PRELOAD instead of CUDA_INJECTION64_PATH: initialize when loaded.
__attribute__((constructor)) static void preload(void) {
    const char* p = getenv("SHADOW_TOOL_PRELOAD");
    if (p && p[0] == '1') InitializeInjection();
}
