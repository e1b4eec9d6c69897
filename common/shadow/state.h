// state.h: the protocol checker's state in device memory, as the tool's host
// library (common/shadow/tool/shadow_tool.c, plain C) allocates and reads it
// and the device side (shadow.cuh) uses it. One definition for both.
#pragma once

#include "common/shadow/core.h"

#define SH_MAP_ENTRIES (1 << 18)  // content hash -> props, per table; every edited state of every map goes in
#define SH_GMAPS 4096             // tensor maps the device wrote into global memory
#define SH_LAUNCHES 4096          // launches in flight at once (a ring of ShLaunch)
#define SH_CLAIMING (1ull << 63)

typedef struct {
    unsigned int state;  // 0 free, 1 being written, 2 ready
    unsigned long long hash;
    ShProps props;
} ShMapEntry;

typedef struct {
    ShCta* slots;
    unsigned int nslots;
    unsigned int* slot_launch;  // per slot: the launch whose CTA claimed it
    unsigned int* slot_ended;   // per slot: that CTA's threads past their end
    ShMapEntry* host_maps;      // made by the host's encoder (the tool sees cuTensorMapEncodeTiled)
    ShMapEntry* device_maps;    // derived by an edit on the device
    ShGlobalMap* gmaps;
    unsigned int claims;     // CTAs checked (their slot claimed)
    unsigned int untracked;  // CTAs the checker could not track (their slot was in use)
    ShReport report;
} ShGlobal;

// One launch, as its patches see it (their userdata): the state, the launch's
// number, and whether its module was built with the wrappers' hooks.
typedef struct {
    ShGlobal* g;
    unsigned int seq, flags;
} ShLaunch;
enum { SH_LAUNCH_HOOKED = 1 };

// A barrier's origin, in ShBar.flags beside core.h's SH_BAR_* bits. A kernel
// built with the wrappers' hooks initializes its barriers through the hook
// (it knows the count) just before the API reports the init; a kernel with no
// hooks (a twin, raw PTX) is seen only by the API, which reports no count, no
// expect_tx bytes and no wait parity: its barriers are kept with their bytes
// unknown (no B2, B3, B4 on them) and their init taken as published.
enum { SH_BAR_HOOKED = 0x100, SH_BAR_HOOK_FRESH = 0x200 };

// A report's site when a patch made it: file is this marker, line the low 31
// bits of the patched instruction's pc (a site is kept past the event that
// made it, a late B2, so it may point only at constant strings); the tool maps
// the pc back to the kernel, its offset and the source line (the binary's -lineinfo).
#define SH_PC_SITE "@pc"

// A tensor map's identity: a hash of its 128 bytes (the host's encoder and the
// device's edits register what each map moves under it).
SH_INL unsigned long long sh_map_hash(const void* map) {
    const unsigned long long* w = (const unsigned long long*)map;
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < 16; ++i) {
        h ^= w[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}
