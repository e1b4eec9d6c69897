// hooks.h: how the wrappers call the shadow build's protocol checker
// (common/shadow/shadow.cuh). In a normal build every macro here is empty:
// the wrappers, and the machine code of every kernel, are exactly what they
// would be without them (tests/test_shadow.py compares the SASS). With
// -DTUTORIAL_SHADOW (make SHADOW=1) each wrapper also reports what it does.
//
//   void mbar_arrive(uint64_t* bar SHADOW_SITE)   the caller's file, line and
//                                                 function, as default arguments
//   SHADOW(arrive(bar, ... SHADOW_PASS));         calls shadow_arrive(...)
//   SHADOW_WROTE(box, bytes);                     in a kernel: this thread wrote
//                                                 (part of) box with ordinary stores
//   SHADOW_READ(p, bytes);                        this thread reads p..p+bytes
//   SHADOW_WAITED(bar, parity, done)              a bounded wait's result `done`,
//                                                 which the shadow also learns
#pragma once

#ifdef TUTORIAL_SHADOW
#define SHADOW_SITE_ONLY                                                              \
    const char *shadow_file_ = __builtin_FILE(), int shadow_line_ = __builtin_LINE(), \
               const char *shadow_func_ = __builtin_FUNCTION()
#define SHADOW_SITE , SHADOW_SITE_ONLY
#define SHADOW_PASS_ONLY shadow_file_, shadow_line_, shadow_func_
#define SHADOW_PASS , SHADOW_PASS_ONLY
#define SHADOW(call) shadow_##call
#define SHADOW_WROTE(p, bytes) shadow_wrote((p), (uint32_t)(bytes), __FILE__, __LINE__, __func__)
#define SHADOW_READ(p, bytes) shadow_read((p), (uint32_t)(bytes), __FILE__, __LINE__, __func__)
#define SHADOW_WAITED(bar, parity, ...) shadow_waited((bar), (parity), __VA_ARGS__)
#else
#define SHADOW_SITE_ONLY
#define SHADOW_SITE
#define SHADOW_PASS_ONLY
#define SHADOW_PASS
#define SHADOW(call)
#define SHADOW_WROTE(p, bytes)
#define SHADOW_READ(p, bytes)
#define SHADOW_WAITED(bar, parity, done) (done)
#endif
