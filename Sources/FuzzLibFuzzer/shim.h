#ifndef FUZZ_LIBFUZZER_SHIM_H
#define FUZZ_LIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that have their own `main`
/// (compiler-rt, FuzzerInterface.h). It parses libFuzzer's flags from
/// argv and calls `callback` once per input. The symbol comes from the
/// runtime that `-sanitize=fuzzer` links; no library is named here.
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*callback)(const uint8_t *data, size_t size));

#endif
