// tool_sanitizer.h: what the tool's two host libraries (shadow_tool.c, the
// checker; probe_inject.c, the probe) share of the Sanitizer API.
#pragma once

#include <sanitizer.h>

// A result code as the API names it ("SANITIZER_ERROR_INVALID_PARAMETER" ...).
static inline const char* tool_result_string(SanitizerResult r) {
    const char* s = NULL;
    sanitizerGetResultString(r, &s);
    return s ? s : "?";
}
