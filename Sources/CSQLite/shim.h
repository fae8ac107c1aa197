#ifndef CSQLITE_SHIM_H
#define CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import; binding text and
/// blobs with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// Asks the CPU to bring `length` bytes from `start` into its caches
/// without waiting for them, one prefetch every 64 bytes (the cache line of
/// x86-64 and most ARM cores; where lines are longer, some prefetches
/// repeat, which is harmless). Swift has no prefetch intrinsic.
static inline void csqlite_prefetch(const void *start, int length) {
    const char *bytes = (const char *)start;
    for (int offset = 0; offset < length; offset += 64) {
        __builtin_prefetch(bytes + offset);
    }
}
#endif
