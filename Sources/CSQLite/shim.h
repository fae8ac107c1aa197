#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import; binding text and
/// blobs with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// sqlite3_config is variadic, so Swift cannot call it directly.
static inline int csqlite_config_multithread(void) {
    return sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

/// Asks the CPU to bring `length` bytes from `start` into its caches, one
/// cache line (64 bytes on x86-64, at most that elsewhere) at a time,
/// without waiting for them. Swift has no prefetch intrinsic.
static inline void csqlite_prefetch(const void *start, int length) {
    const char *bytes = (const char *)start;
    for (int offset = 0; offset < length; offset += 64) {
        __builtin_prefetch(bytes + offset);
    }
}
#endif
