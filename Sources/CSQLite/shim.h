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
#endif
