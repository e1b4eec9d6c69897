// shadow_tool.c: the protocol checker's host side, a library the CUDA driver
// loads into a program (CUDA_INJECTION64_PATH=build/shadow_tool/libshadow_tool.so;
// make shadow-NN sets it). It runs the program as built and checks its kernels
// through CUDA's Sanitizer API:
//   - every module with line info (the program's: the Makefile builds with
//     -lineinfo; cuBLAS's cubins have none) gets the patch functions of
//     shadow_patches.cu at the instrumentation points below;
//   - the first checked launch allocates the state (state.h); each launch gets
//     its number and the state as its patches' userdata; a module built with
//     the wrappers' hooks (-DTUTORIAL_SHADOW) gets the state's address in its
//     g_shadow_state, at the end of the driver call that loaded it (a driver
//     call made inside the launch's own callback waits forever on the
//     driver's lock: the H200 showed it);
//   - every cuTensorMapEncodeTiled the program calls registers what one copy
//     through that map moves (the TMA loads' bytes for B3);
//   - at every synchronization, the report of a broken rule is read, printed
//     on stderr as one line (the rule, what broke it, the block and thread, the
//     kernel and its source line, from the pc and the cubin's line info
//     through nvdisasm) and cleared; at exit a summary line, and the exit code
//     becomes 1 if any rule broke.
//
// Environment:
//   SHADOW_TOOL_PATCHES   the patch fatbin (default: shadow_patches.fatbin beside this library)
//   SHADOW_TOOL_MODULES   "all": check every module, the libraries' too
//   SHADOW_TOOL_SLOTS     CTA states (default 8192; a CTA whose slot a live one holds goes unchecked)
//   SHADOW_TOOL_NVDISASM  nvdisasm to place a pc in the source (default: $CUDA_HOME/bin/nvdisasm, else PATH)
//   SHADOW_TOOL_SUMMARY   a file the summary line is appended to (make check-NN SHADOW=1 reads it)
//   SHADOW_TOOL_TRACE     "1": one stderr line per module, launch, hand-over and synchronization (a
//                         run that never ends shows where it stopped)
//   CUDA_MODULE_LOADING   EAGER (set here if unset): a module must load before its first launch
//   SHADOW_TOOL_HOOKS     "off": no module gets the state, its hooks stay unfed (a diagnosis: what the
//                         API alone sees of a hooked build; its waits then look unordered)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/shadow/tool/tool_host.h"
#include "common/shadow/tool/tool_sanitizer.h"

// cuTensorMapEncodeTiled's arguments as the driver API callback hands them
// over: cuTensorMapEncodeTiled_params of the toolkit's generated_cuda_meta.h,
// which needs the driver's internal version macros to compile.
typedef struct {
    CUtensorMap* tensorMap;
    CUtensorMapDataType tensorDataType;
    cuuint32_t tensorRank;
    void* globalAddress;
    const cuuint64_t* globalDim;
    const cuuint64_t* globalStrides;
    const cuuint32_t* boxDim;
    const cuuint32_t* elementStrides;
    CUtensorMapInterleave interleave;
    CUtensorMapSwizzle swizzle;
    CUtensorMapL2promotion l2Promotion;
    CUtensorMapFloatOOBfill oobFill;
} EncodeTiledParams;

// The points the checker patches, and the patch function each calls.
static const struct {
    Sanitizer_InstructionId id;
    const char* patch;
} kPoints[] = {
    {SANITIZER_INSTRUCTION_BLOCK_ENTER, "shadow_block_enter"},
    {SANITIZER_INSTRUCTION_BLOCK_EXIT, "shadow_block_exit"},
    {SANITIZER_INSTRUCTION_SHARED_MEMORY_ACCESS, "shadow_shared_access"},
    {SANITIZER_INSTRUCTION_MATRIX_MEMORY_ACCESS, "shadow_matrix_access"},
    {SANITIZER_INSTRUCTION_REMOTE_SHARED_MEMORY_ACCESS, "shadow_remote_shared_access"},
    {SANITIZER_INSTRUCTION_BARRIER, "shadow_barrier"},
    {SANITIZER_INSTRUCTION_SYNCWARP, "shadow_syncwarp"},
    // every mbarrier operation, each once (the probe: a superset of CUDA_BARRIER)
    {SANITIZER_INSTRUCTION_CUDA_BARRIER_ATTEMPT, "shadow_cuda_barrier"},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC, "shadow_memcpy_async"},
    {SANITIZER_INSTRUCTION_PIPELINE_COMMIT, "shadow_pipeline_commit"},
    {SANITIZER_INSTRUCTION_PIPELINE_WAIT, "shadow_pipeline_wait"},
    {SANITIZER_INSTRUCTION_MEMCPY_ASYNC_BARRIER, "shadow_memcpy_async_barrier"},
    {SANITIZER_INSTRUCTION_BULK_COPY_GLOBAL_TO_SHARED, "shadow_bulk_g2s"},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_GLOBAL, "shadow_bulk_s2g"},
    {SANITIZER_INSTRUCTION_BULK_COPY_SHARED_TO_SHARED, "shadow_bulk_s2s"},
    {SANITIZER_INSTRUCTION_BULK_REDUCTION_SHARED_TO_GLOBAL, "shadow_bulk_reduce_s2g"},
    {SANITIZER_INSTRUCTION_BULK_REDUCTION_SHARED_TO_SHARED, "shadow_bulk_reduce_s2s"},
    {SANITIZER_INSTRUCTION_ASYNC_STORE, "shadow_async_store"},
    {SANITIZER_INSTRUCTION_ASYNC_REDUCTION, "shadow_async_reduction"},
    {SANITIZER_INSTRUCTION_WARPGROUP_MMA_ASYNC, "shadow_wgmma"},
    {SANITIZER_INSTRUCTION_WARPGROUP_WAIT_GROUP, "shadow_wgmma_wait"},
    {SANITIZER_INSTRUCTION_WARPGROUP_FENCE, "shadow_wgmma_fence"},
    {SANITIZER_INSTRUCTION_CLUSTER_BARRIER_ARRIVE, "shadow_cluster_arrive"},
    {SANITIZER_INSTRUCTION_CLUSTER_BARRIER_WAIT, "shadow_cluster_wait"},
};
#define NPOINTS (sizeof kPoints / sizeof kPoints[0])

#define MAX_MODULES 256
#define MAX_FUNCTIONS 1024
#define MAX_PENDING_MAPS 4096

typedef struct {
    CUmodule module;
    int checked;
    char* cubin;  // a copy, for nvdisasm when a report names a pc in it
    size_t cubin_bytes;
    char* disasm;  // nvdisasm -gi of it, made once, when first needed
    CUcontext context;
    int has_hooks;  // built with the wrappers' hooks: its cubin defines g_shadow_state
    int hooked;     // ... and the state's address is written there
} Module;

typedef struct {
    CUfunction function;
    int module;
    char name[512];
    uint64_t pc, size;
} Function;

typedef struct {
    unsigned long long hash;
    ShProps props;
} PendingMap;

static Module g_modules[MAX_MODULES];
static int g_nmodules;
static Function g_functions[MAX_FUNCTIONS];
static int g_nfunctions;
static CUcontext g_patched_contexts[8];
static int g_npatched_contexts;
static char g_patch_file[4096];

// The state, allocated in the first checked launch's context.
static CUcontext g_context;
static ShGlobal* g_dev;   // device
static ShGlobal g_host;   // the host's copy of its pointers
static ShLaunch* g_ring;  // device, SH_LAUNCHES entries
static unsigned g_launches, g_reports, g_slots = 8192;
static unsigned char* g_map_used;  // host-side occupancy of host_maps (SH_MAP_ENTRIES)
static PendingMap g_pending[MAX_PENDING_MAPS];
static int g_npending;
static int g_exit_registered, g_initialized, g_check_all, g_trace, g_hooks_off;
static int g_handovers_due, g_in_driver_call;

#define TRACE(...) (g_trace ? (fprintf(stderr, "shadow trace: " __VA_ARGS__), fflush(stderr)) : 0)

typedef CUresult (*ModuleGetGlobal)(CUdeviceptr*, size_t*, CUmodule, const char*);
typedef char* (*Demangle)(const char*, char*, size_t*, int*);

static int find_module(CUmodule m) {
    for (int i = 0; i < g_nmodules; ++i)
        if (g_modules[i].module == m) return i;
    return -1;
}

static void module_loaded(const Sanitizer_ResourceModuleData* d) {
    if (g_nmodules == MAX_MODULES) return;
    Module* m = &g_modules[g_nmodules++];
    memset(m, 0, sizeof *m);
    m->module = d->module;
    m->context = d->context;
    m->checked = g_check_all || tool_has_section(d->pCubin, d->cubinSize, ".debug_line");
    TRACE("module %d loaded (%zu bytes), %s\n", g_nmodules - 1, d->cubinSize,
          m->checked ? "checked" : "not checked");
    if (!m->checked) return;
    int have = 0;
    for (int i = 0; i < g_npatched_contexts; ++i) have |= g_patched_contexts[i] == d->context;
    if (!have) {
        const SanitizerResult r = sanitizerAddPatchesFromFile(g_patch_file, d->context);
        if (r != SANITIZER_SUCCESS) {
            fprintf(stderr, "shadow: cannot load the patch functions %s: %s; nothing is checked\n",
                    g_patch_file, tool_result_string(r));
            m->checked = 0;
            return;
        }
        if (g_npatched_contexts < 8) g_patched_contexts[g_npatched_contexts++] = d->context;
    }
    for (unsigned i = 0; i < NPOINTS; ++i) {
        const SanitizerResult r = sanitizerPatchInstructions(kPoints[i].id, d->module, kPoints[i].patch);
        if (r != SANITIZER_SUCCESS)
            fprintf(stderr, "shadow: instrumentation point %d (%s) not patched: %s\n", (int)kPoints[i].id,
                    kPoints[i].patch, tool_result_string(r));
    }
    const SanitizerResult r = sanitizerPatchModule(d->module);
    if (r != SANITIZER_SUCCESS) {
        fprintf(stderr, "shadow: the module could not be patched: %s; its kernels are not checked\n",
                tool_result_string(r));
        m->checked = 0;
        return;
    }
    if ((m->cubin = malloc(d->cubinSize))) {
        memcpy(m->cubin, d->pCubin, d->cubinSize);
        m->cubin_bytes = d->cubinSize;
    }
    m->has_hooks = !g_hooks_off && tool_has_symbol(d->pCubin, d->cubinSize, "g_shadow_state");
    g_handovers_due += m->has_hooks;
}

// The host_maps table: each map's props at its hash (linear probing, as sh_table_find reads it).
static void insert_map(unsigned long long hash, const ShProps* p, Sanitizer_StreamHandle stream) {
    for (uint32_t i = 0; i < 64; ++i) {
        const uint32_t k = (uint32_t)((hash + i) % SH_MAP_ENTRIES);
        if (g_map_used[k]) {
            ShMapEntry have;
            sanitizerMemcpyDeviceToHost(&have, &g_host.host_maps[k], sizeof have, stream);
            if (have.hash == hash) return;
            continue;
        }
        // The body first, then the state word that makes it visible to the device's lookups.
        ShMapEntry e;
        memset(&e, 0, sizeof e);
        e.hash = hash;
        e.props = *p;
        sanitizerMemcpyHostToDeviceAsync(&g_host.host_maps[k], &e, sizeof e, stream);
        const unsigned ready = 2;
        sanitizerMemcpyHostToDeviceAsync(&g_host.host_maps[k].state, (void*)&ready, sizeof ready, stream);
        sanitizerStreamSynchronize(stream);
        g_map_used[k] = 1;
        return;
    }
}

static void map_encoded(const Sanitizer_CallbackData* d) {
    if (d->callbackSite != SANITIZER_API_EXIT || *(const CUresult*)d->functionReturnValue != CUDA_SUCCESS)
        return;
    const EncodeTiledParams* p = (const EncodeTiledParams*)d->functionParams;
    PendingMap m;
    if (!tool_props_of_encode((int)p->tensorDataType, p->tensorRank, p->boxDim, p->elementStrides,
                              (int)p->swizzle, &m.props))
        return;
    m.hash = sh_map_hash(p->tensorMap);
    if (g_dev)
        insert_map(m.hash, &m.props, NULL);
    else if (g_npending < MAX_PENDING_MAPS)
        g_pending[g_npending++] = m;
}

static int allocate_state(CUcontext ctx, Sanitizer_StreamHandle stream) {
    const size_t slots = (size_t)g_slots * sizeof(ShCta);
    memset(&g_host, 0, sizeof g_host);
    g_host.nslots = g_slots;
    if (sanitizerAlloc(ctx, (void**)&g_host.slots, slots) ||
        sanitizerAlloc(ctx, (void**)&g_host.slot_launch, g_slots * 4) ||
        sanitizerAlloc(ctx, (void**)&g_host.slot_ended, g_slots * 4) ||
        sanitizerAlloc(ctx, (void**)&g_host.host_maps, SH_MAP_ENTRIES * sizeof(ShMapEntry)) ||
        sanitizerAlloc(ctx, (void**)&g_host.device_maps, SH_MAP_ENTRIES * sizeof(ShMapEntry)) ||
        sanitizerAlloc(ctx, (void**)&g_host.gmaps, SH_GMAPS * sizeof(ShGlobalMap)) ||
        sanitizerAlloc(ctx, (void**)&g_dev, sizeof(ShGlobal)) ||
        sanitizerAlloc(ctx, (void**)&g_ring, SH_LAUNCHES * sizeof(ShLaunch))) {
        fprintf(stderr,
                "shadow: cannot allocate the checker's state (%zu MiB for %u CTA slots; SHADOW_TOOL_SLOTS "
                "sets fewer)\n",
                slots >> 20, g_slots);
        g_dev = NULL;
        return 0;
    }
    sanitizerMemset(g_host.slots, 0, slots, stream);
    sanitizerMemset(g_host.slot_launch, 0, g_slots * 4, stream);
    sanitizerMemset(g_host.slot_ended, 0, g_slots * 4, stream);
    sanitizerMemset(g_host.host_maps, 0, SH_MAP_ENTRIES * sizeof(ShMapEntry), stream);
    sanitizerMemset(g_host.device_maps, 0, SH_MAP_ENTRIES * sizeof(ShMapEntry), stream);
    sanitizerMemset(g_host.gmaps, 0, SH_GMAPS * sizeof(ShGlobalMap), stream);
    sanitizerMemset(g_ring, 0, SH_LAUNCHES * sizeof(ShLaunch), stream);
    sanitizerMemcpyHostToDeviceAsync(g_dev, &g_host, sizeof g_host, stream);
    sanitizerStreamSynchronize(stream);
    g_map_used = calloc(SH_MAP_ENTRIES, 1);
    g_context = ctx;
    for (int i = 0; i < g_npending; ++i) insert_map(g_pending[i].hash, &g_pending[i].props, stream);
    g_npending = 0;
    return 1;
}

// A driver function: libcuda is loaded by the CUDA runtime with dlopen, its
// symbols not always in the global scope, so it is also looked up by name.
static void* driver_symbol(const char* name) {
    void* f = dlsym(RTLD_DEFAULT, name);
    void* lib = f ? NULL : dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return f ? f : lib ? dlsym(lib, name) : NULL;
}

// A module built with the wrappers' hooks has g_shadow_state: it gets the
// state's address, and its launches are hooked (the hooks give what the API
// does not: an init's count, an expect_tx's bytes, a wait's parity). Called at
// the end of a driver call, outside the driver's lock. A module whose state
// cannot be handed over stops the program: its hooks would feed nothing and
// its waits would look unordered.
static void hand_over(Module* m) {
    static ModuleGetGlobal get;
    if (!get) get = (ModuleGetGlobal)driver_symbol("cuModuleGetGlobal_v2");
    if (!get) {
        fprintf(
            stderr,
            "shadow tool: cuModuleGetGlobal_v2 not found in the CUDA driver: no module's hooks can be fed\n");
        _exit(2);  // inside a driver callback: exit()'s handlers would call the driver again
    }
    CUdeviceptr at = 0;
    size_t bytes = 0;
    TRACE("looking for g_shadow_state\n");
    const CUresult r = get(&at, &bytes, m->module, "g_shadow_state");
    if (r != CUDA_SUCCESS || bytes != sizeof(void*)) {
        fprintf(stderr, "shadow tool: the module's g_shadow_state %s: its hooks cannot be fed\n",
                r != CUDA_SUCCESS ? "is not found by the driver" : "is not a pointer");
        _exit(2);
    }
    TRACE("handing the state to g_shadow_state at 0x%llx\n", (unsigned long long)at);
    sanitizerMemcpyHostToDeviceAsync((void*)at, &g_dev, sizeof g_dev, NULL);
    sanitizerStreamSynchronize(NULL);
    m->hooked = 1;
    TRACE("handed over\n");
}

// At the end of every driver call: the modules loaded during it that have hooks get the state (allocated
// first, in the module's context, if no launch has allocated it yet).
static void driver_call_ended(void) {
    if (!g_handovers_due || g_in_driver_call) return;
    g_in_driver_call = 1;  // the driver calls made here end too
    for (int i = 0; i < g_nmodules; ++i) {
        Module* m = &g_modules[i];
        if (!m->checked || !m->has_hooks || m->hooked) continue;
        if (!g_dev && (g_context || !allocate_state(m->context, NULL))) break;
        if (m->context == g_context) hand_over(m);
    }
    g_handovers_due = 0;
    for (int i = 0; i < g_nmodules; ++i)
        g_handovers_due += g_modules[i].checked && g_modules[i].has_hooks && !g_modules[i].hooked;
    g_in_driver_call = 0;
}

static Function* function_of(const Sanitizer_LaunchData* l, int module) {
    for (int i = 0; i < g_nfunctions; ++i)
        if (g_functions[i].function == l->function) return &g_functions[i];
    if (g_nfunctions == MAX_FUNCTIONS) return NULL;
    Function* f = &g_functions[g_nfunctions++];
    memset(f, 0, sizeof *f);
    f->function = l->function;
    f->module = module;
    snprintf(f->name, sizeof f->name, "%s", l->functionName ? l->functionName : "?");
    if (sanitizerGetFunctionPcAndSize(l->module, f->name, &f->pc, &f->size) != SANITIZER_SUCCESS)
        f->pc = f->size = 0;
    return f;
}

static void at_exit(void);

static void launch_begin(const Sanitizer_LaunchData* l) {
    const int mi = find_module(l->module);
    if (mi < 0 || !g_modules[mi].checked) return;
    if (!g_dev && (g_context || !allocate_state(l->context, l->hStream))) return;
    if (l->context != g_context) return;  // one context is checked: the first
    if (g_modules[mi].has_hooks && !g_modules[mi].hooked) {
        // loaded inside this launch: no driver call can be made here to hand the state over
        fprintf(stderr,
                "shadow tool: %s's module was loaded inside its launch, where its hooks cannot be given "
                "the state: run with CUDA_MODULE_LOADING=EAGER\n",
                l->functionName ? l->functionName : "a kernel");
        _exit(2);
    }
    const Function* f = function_of(l, mi);
    TRACE("launch %u of %s (module %d, %s)\n", g_launches + 1, f ? f->name : "?", mi,
          g_modules[mi].hooked ? "hooked" : "unhooked");
    ShLaunch rec;
    rec.g = g_dev;
    rec.seq = ++g_launches;
    rec.flags = g_modules[mi].hooked ? SH_LAUNCH_HOOKED : 0u;
    ShLaunch* slot = &g_ring[rec.seq % SH_LAUNCHES];
    sanitizerMemcpyHostToDeviceAsync(slot, &rec, sizeof rec, l->hStream);
    if (sanitizerSetLaunchCallbackData(l->hLaunch, l->function, l->hStream, slot) != SANITIZER_SUCCESS)
        sanitizerSetCallbackData(l->function, slot);
    // Registered after the CUDA runtime registered its teardown, so it runs before it.
    if (!g_exit_registered) g_exit_registered = !atexit(at_exit);
}

// ---- the report ----------------------------------------------------------------------
static const char* nvdisasm_path(void) {
    static char path[4096];
    const char* env = getenv("SHADOW_TOOL_NVDISASM");
    if (env) return env;
    const char* home = getenv("CUDA_HOME");
    snprintf(path, sizeof path, "%s/bin/nvdisasm", home ? home : "/usr/local/cuda");
    return access(path, X_OK) == 0 ? path : "nvdisasm";
}

static const char* disasm_of(Module* m) {
    if (m->disasm || !m->cubin) return m->disasm;
    char file[] = "/tmp/shadow_tool_XXXXXX";
    const int fd = mkstemp(file);
    if (fd < 0) return NULL;
    const int wrote = write(fd, m->cubin, m->cubin_bytes) == (ssize_t)m->cubin_bytes;
    close(fd);
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "'%s' -gi -c '%s' 2>/dev/null", nvdisasm_path(), file);
    FILE* p = wrote ? popen(cmd, "r") : NULL;
    size_t cap = 1 << 20, len = 0;
    char* text = p ? malloc(cap) : NULL;
    for (size_t n; text && (n = fread(text + len, 1, cap - len - 1, p)) > 0;) {
        len += n;
        if (cap - len < 2) text = realloc(text, cap *= 2);
    }
    if (text) text[len] = '\0';
    if (p) pclose(p);
    unlink(file);
    return m->disasm = len ? text : (free(text), NULL);
}

// "kernel (file:line)" for a report's site: a hook's own, or the patched pc's.
static void where_of(const ShReport* r, char* out, size_t cap) {
    if (!r->file[0]) {  // no site: the audit at the CTA's end (S3, C1); one word before it, as tools/bugs.py
                        // reads
        snprintf(out, cap, "at-exit (the CTA's end)");
        return;
    }
    if (strcmp(r->file, SH_PC_SITE)) {
        snprintf(out, cap, "%s (%s:%u)", r->func, r->file, r->line);
        return;
    }
    for (int i = 0; i < g_nfunctions; ++i) {
        const Function* f = &g_functions[i];
        const unsigned long long off = (r->line - (f->pc & 0x7FFFFFFFull)) & 0x7FFFFFFFull;
        if (!f->size || off >= f->size) continue;
        char name[512];
        Demangle demangle = (Demangle)dlsym(RTLD_DEFAULT, "__cxa_demangle");
        int status = -1;
        char* d = demangle ? demangle(f->name, NULL, NULL, &status) : NULL;
        tool_short_name(status == 0 && d ? d : f->name, name, sizeof name);
        free(d);
        const char* text = f->module >= 0 ? disasm_of(&g_modules[f->module]) : NULL;
        ToolLine line;
        if (text && tool_line_at(text, f->name, off, &line)) {
            if (strcmp(line.inner_file, line.outer_file) || line.inner_line != line.outer_line)
                snprintf(out, cap, "%s (%s:%d, in %s:%d)", name, line.outer_file, line.outer_line,
                         line.inner_file, line.inner_line);
            else
                snprintf(out, cap, "%s (%s:%d)", name, line.outer_file, line.outer_line);
        } else {
            snprintf(out, cap, "%s (offset 0x%llx; no line info: nvdisasm not found?)", name, off);
        }
        return;
    }
    snprintf(out, cap, "(a kernel the tool did not see launched, pc low bits 0x%x)", r->line);
}

// Reads the report; prints and clears it if a rule broke.
static void take_report(Sanitizer_StreamHandle stream) {
    if (!g_dev) return;
    unsigned reported = 0;
    if (sanitizerMemcpyDeviceToHost(&reported, &g_dev->report.reported, sizeof reported, stream) !=
            SANITIZER_SUCCESS ||
        !reported)
        return;
    ShReport r;
    sanitizerMemcpyDeviceToHost(&r, &g_dev->report, sizeof r, stream);
    char where[1024], line[1500];
    where_of(&r, where, sizeof where);
    tool_format_report(&r, where, line, sizeof line);
    fflush(stdout);
    fprintf(stderr, "%s\n", line);
    ++g_reports;
    sanitizerMemset(&g_dev->report, 0, sizeof g_dev->report, stream);
    sanitizerStreamSynchronize(stream);
}

static void at_exit(void) {
    take_report(NULL);
    unsigned untracked = 0, claims = 0;
    if (g_dev) sanitizerMemcpyDeviceToHost(&untracked, &g_dev->untracked, sizeof untracked, NULL);
    if (g_dev) sanitizerMemcpyDeviceToHost(&claims, &g_dev->claims, sizeof claims, NULL);
    int kernels = 0;
    for (int i = 0; i < g_nfunctions; ++i) kernels += g_modules[g_functions[i].module].checked;
    fflush(stdout);
    char line[300];
    snprintf(line, sizeof line,
             "shadow: checked %u launches of %d kernels, %u CTAs (%u unchecked: their slot was in use); %s\n",
             g_launches, kernels, claims, untracked, g_reports ? "RULES BROKEN (above)" : "no rule broken");
    fputs(line, stderr);
    const char* to = getenv("SHADOW_TOOL_SUMMARY");
    FILE* f = to ? fopen(to, "a") : NULL;
    if (f) fputs(line, f), fclose(f);
    if (g_reports) {
        fflush(NULL);
        _exit(1);
    }
}

static void SANITIZERAPI callback(void* userdata, Sanitizer_CallbackDomain domain, Sanitizer_CallbackId cbid,
                                  const void* cbdata) {
    (void)userdata;
    if (domain == SANITIZER_CB_DOMAIN_RESOURCE && cbid == SANITIZER_CBID_RESOURCE_MODULE_LOADED) {
        module_loaded((const Sanitizer_ResourceModuleData*)cbdata);
    } else if (domain == SANITIZER_CB_DOMAIN_LAUNCH && cbid == SANITIZER_CBID_LAUNCH_BEGIN) {
        launch_begin((const Sanitizer_LaunchData*)cbdata);
    } else if (domain == SANITIZER_CB_DOMAIN_SYNCHRONIZE) {
        TRACE("synchronize\n");
        take_report(((const Sanitizer_SynchronizeData*)cbdata)->hStream);
    } else if (domain == SANITIZER_CB_DOMAIN_DRIVER_API) {
        const Sanitizer_CallbackData* d = (const Sanitizer_CallbackData*)cbdata;
        if (cbid == SANITIZER_CBID_DRIVER_API_cuTensorMapEncodeTiled) map_encoded(d);
        if (d->callbackSite == SANITIZER_API_EXIT) driver_call_ended();
    }
}

int InitializeInjection(void) {
    if (g_initialized) return 1;
    g_initialized = 1;
    const char* patches = getenv("SHADOW_TOOL_PATCHES");
    Dl_info info;
    if (patches) {
        snprintf(g_patch_file, sizeof g_patch_file, "%s", patches);
    } else if (dladdr((void*)InitializeInjection, &info) && info.dli_fname) {  // beside this library
        snprintf(g_patch_file, sizeof g_patch_file, "%s", info.dli_fname);
        char* slash = strrchr(g_patch_file, '/');
        const size_t at = slash ? (size_t)(slash + 1 - g_patch_file) : 0;
        snprintf(g_patch_file + at, sizeof g_patch_file - at, "shadow_patches.fatbin");
    }
    // Every module loaded when the context is made, in a driver call of its own, at whose end the hooks'
    // state is handed over: loaded lazily, a module can load inside its first launch, too late for that.
    // (The environment that loads the tool sets it too: make's SHADOW_ENV, tools/bugs.py's tool_env.)
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    const char* v = getenv("SHADOW_TOOL_MODULES");
    g_check_all = v && !strcmp(v, "all");
    g_trace = (v = getenv("SHADOW_TOOL_TRACE")) && v[0] == '1';
    g_hooks_off = (v = getenv("SHADOW_TOOL_HOOKS")) && !strcmp(v, "off");
    if ((v = getenv("SHADOW_TOOL_SLOTS")) && atoi(v) > 0) g_slots = (unsigned)atoi(v);
    Sanitizer_SubscriberHandle handle;
    const SanitizerResult r = sanitizerSubscribe(&handle, callback, NULL);
    if (r != SANITIZER_SUCCESS) {
        fprintf(stderr, "shadow: sanitizerSubscribe failed: %s; nothing is checked\n", tool_result_string(r));
        return 0;
    }
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_RESOURCE);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_LAUNCH);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_SYNCHRONIZE);
    sanitizerEnableDomain(1, handle, SANITIZER_CB_DOMAIN_DRIVER_API);  // every call's end: the hand-overs
    return 1;
}

// LD_PRELOAD instead of CUDA_INJECTION64_PATH: initialize when loaded.
__attribute__((constructor)) static void preload(void) {
    const char* p = getenv("SHADOW_TOOL_PRELOAD");
    if (p && p[0] == '1') InitializeInjection();
}
