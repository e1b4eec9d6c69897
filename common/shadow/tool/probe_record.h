// probe_record.h: what the probe's patch functions (probe_patches.cu) count for
// one kernel, and its host library (probe_inject.c) reads back and writes out.
// Plain C: the host side is C, the device side CUDA.
#pragma once

#include <stdint.h>

// The Sanitizer API's instrumentation points are numbered 1..40
// (Sanitizer_InstructionId in sanitizer_patching.h, CUDA 13.0).
#define PROBE_CLASSES 41
#define PROBE_SAMPLES 4  // the first calls of each class, with their arguments
#define PROBE_PCS 64     // distinct patched instructions per class (an open-addressed set)

typedef struct {
    unsigned long long pc;
    unsigned int block, thread;  // linear indices
    unsigned long long arg[6];   // the patch function's arguments after (userdata, pc), widened
} ProbeSample;

typedef struct {
    unsigned long long calls[PROBE_CLASSES];  // one per thread that reached a patched instruction
    unsigned int nsamples[PROBE_CLASSES];
    ProbeSample samples[PROBE_CLASSES][PROBE_SAMPLES];
    unsigned long long pcs[PROBE_CLASSES][PROBE_PCS];  // 0 = empty slot
    unsigned long long pc_calls[PROBE_CLASSES][PROBE_PCS];
} ProbeRecord;
