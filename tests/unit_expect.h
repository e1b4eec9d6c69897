// The host unit tests' one assertion: EXPECT(name, cond) prints "ok NAME" or
// "FAIL NAME: cond" and counts the failures; the test's main ends with
// UNIT_RESULT(), which prints "UNIT: PASS" or "UNIT: FAIL" (what
// tests/conftest.py's run_unit requires) and returns the exit code.
#pragma once
#include <stdio.h>

static int unit_failures = 0;
#define EXPECT(name, cond)                        \
    do {                                          \
        if (cond)                                 \
            printf("ok %s\n", name);              \
        else {                                    \
            printf("FAIL %s: %s\n", name, #cond); \
            ++unit_failures;                      \
        }                                         \
    } while (0)
#define UNIT_RESULT() (printf("UNIT: %s\n", unit_failures ? "FAIL" : "PASS"), unit_failures ? 1 : 0)
