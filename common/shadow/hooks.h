// hooks.h: how the wrappers hand the protocol checker (common/shadow/) what
// CUDA's Sanitizer API cannot see: a tensor TMA copy, a bulk group's commit
// and which wait is .read, a proxy fence, an mbarrier's count, an expect_tx's
// bytes and a wait's parity, bar.arrive, the tensor-map edits and fences, a
// wgmma's descriptors and the threads' reads of its accumulators (the probe's
// record: common/shadow/README.md); and the wgmma fence, commit and wait in
// the PTX's order, since a hook is a call and ptxas reorders the machine's
// around it (the fence after the MMA's hook, a wait after every MMA).
// Everything else the checker's tool sees in the machine code itself. In a
// normal build every macro here is empty: the wrappers, and the machine code
// of every kernel, are exactly what they would be without them
// (tests/test_shadow.py compares the SASS). With -DTUTORIAL_SHADOW (the build
// make shadow-NN checks) each such wrapper also calls its hook,
// common/shadow/shadow.cuh.
//
//   void mbar_init(uint64_t* bar, uint32_t count SHADOW_SITE)   the caller's file,
//                                                 line and function, as default arguments
//   SHADOW(mbar_init(bar, count SHADOW_PASS));    calls shadow_mbar_init(...)
//   SHADOW_WAITED(bar, parity, done)              a bounded wait's result `done`,
//                                                 which the checker also learns, with the parity
#pragma once

#ifdef TUTORIAL_SHADOW
#define SHADOW_SITE_ONLY                                                              \
    const char *shadow_file_ = __builtin_FILE(), int shadow_line_ = __builtin_LINE(), \
               const char *shadow_func_ = __builtin_FUNCTION()
#define SHADOW_SITE , SHADOW_SITE_ONLY
#define SHADOW_PASS_ONLY shadow_file_, shadow_line_, shadow_func_
#define SHADOW_PASS , SHADOW_PASS_ONLY
#define SHADOW(call) shadow_##call
#define SHADOW_WAITED(bar, parity, ...) shadow_waited((bar), (parity), __VA_ARGS__)
#else
#define SHADOW_SITE_ONLY
#define SHADOW_SITE
#define SHADOW_PASS_ONLY
#define SHADOW_PASS
#define SHADOW(call)
#define SHADOW_WAITED(bar, parity, done) (done)
#endif
